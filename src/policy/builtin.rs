//! The policies shipped inside the binary, from `policies/*.yaml`.

/// (name, YAML), in the order `policy list` shows them.
pub const BUILTIN: &[(&str, &str)] = &[("swimlane", include_str!("../../policies/swimlane.yaml"))];

pub fn builtin_yaml(name: &str) -> Option<&'static str> {
    BUILTIN.iter().find(|(n, _)| *n == name).map(|(_, y)| *y)
}
