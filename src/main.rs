fn main() -> std::process::ExitCode {
    iopscheck::app::main()
}
