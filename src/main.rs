fn main() -> std::process::ExitCode {
    iopscheck::main()
}
