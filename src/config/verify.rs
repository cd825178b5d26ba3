//! `iopscheck verify`, decided: the file is a regular file, and what it is (a bundle or a
//! history); `--key` is read and fits what the file can carry.

use std::path::PathBuf;

use crate::cli::VerifyArgs;
use crate::error::usage;

/// `iopscheck verify`, decided.
#[derive(Debug)]
pub struct VerifyConfig {
    /// The bundle or history to check, a regular file.
    pub file: PathBuf,
    /// Whether it is a bundle (gzip); else a history.
    pub bundle: bool,
    /// `--key`: the public key the bundle must be signed by (only with a bundle).
    pub key: Option<ssh_key::PublicKey>,
}

impl TryFrom<VerifyArgs> for VerifyConfig {
    type Error = anyhow::Error;

    fn try_from(args: VerifyArgs) -> anyhow::Result<VerifyConfig> {
        let p = &args.file;
        let shown = p.display();
        let meta = std::fs::metadata(p).map_err(|e| usage(format!("verify: {shown}: {e}")))?;
        if !meta.is_file() {
            return Err(usage(format!("verify: {shown}: not a regular file")));
        }
        let key = match &args.key {
            Some(k) => Some(
                crate::evidence::public_key(k)
                    .map_err(|e| usage(format!("--key {}: {e}", k.display())))?,
            ),
            None => None,
        };
        let bundle = crate::bundle_input::is_gzip(p);
        if !bundle && key.is_some() {
            return Err(usage(format!(
                "--key: {shown} is a history, which carries no signature; a bundle of it can be signed (bundle --sign KEY) and checked with --key"
            )));
        }
        Ok(VerifyConfig {
            file: args.file,
            bundle,
            key,
        })
    }
}
