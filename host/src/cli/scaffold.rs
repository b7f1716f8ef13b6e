//! `benchhost new-rig NAME`: writes a standalone rig crate that builds, tests and runs without edits: one
//! rig of each style with parameters, metrics, counters and an invariant, a test through
//! `benchhost_plugin_api::testing`, and a README.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

const CARGO_TOML: &str = include_str!("../../templates/rig/Cargo.toml.tmpl");
const LIB_RS: &str = include_str!("../../templates/rig/lib.rs.tmpl");
const README: &str = include_str!("../../templates/rig/README.md.tmpl");

/// How the generated crate depends on plugin-api.
pub enum Api {
    /// By version from the registry.
    Version(String),
    /// By path, for development against a checkout.
    Path(PathBuf),
}

impl Api {
    /// `--api-path`, else `--api-version`, else the plugin-api of the source checkout this benchhost was built
    /// from (until plugin-api is on a registry, the only one that resolves), else this benchhost's own version.
    pub fn choose(path: Option<PathBuf>, version: Option<String>) -> Api {
        let checkout = Path::new(env!("CARGO_MANIFEST_DIR")).join("../plugin-api");
        match (path, version) {
            (Some(path), _) => Api::Path(path),
            (None, Some(version)) => Api::Version(version),
            (None, None) if checkout.join("Cargo.toml").is_file() => Api::Path(checkout),
            (None, None) => Api::Version(benchhost_plugin_api::API_VERSION.to_string()),
        }
    }
}

/// Writes the crate for rig `name` into `dir` (created; must not exist or be empty). Returns the files written.
pub fn new_rig(name: &str, dir: &Path, api: &Api) -> anyhow::Result<Vec<PathBuf>> {
    check_name(name)?;
    if dir.exists() && dir.read_dir().with_context(|| format!("reading {}", dir.display()))?.next().is_some() {
        bail!("{} exists and is not empty; new-rig writes only into a new or empty directory", dir.display());
    }
    let api = match api {
        Api::Version(version) => format!("\"{version}\""),
        Api::Path(path) => {
            let path = path.canonicalize().with_context(|| format!("--api-path {}", path.display()))?;
            format!("{{ path = \"{}\" }}", path.display())
        }
    };
    let fill = |template: &str| {
        template
            .replace("{{crate}}", &name.replace('_', "-"))
            .replace("{{lib}}", name)
            .replace("{{name}}", name)
            .replace("{{Type}}", &camel_case(name))
            .replace("{{api}}", &api)
    };
    let files = [("Cargo.toml", fill(CARGO_TOML)), ("src/lib.rs", fill(LIB_RS)), ("README.md", fill(README))];
    let mut written = Vec::new();
    for (file, text) in files {
        let path = dir.join(file);
        std::fs::create_dir_all(path.parent().unwrap_or(dir)).with_context(|| format!("creating {}", dir.display()))?;
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

/// A rig name is a lowercase Rust identifier: it names the rig, the crate, the library and the test functions.
fn check_name(name: &str) -> anyhow::Result<()> {
    let mut chars = name.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_lowercase());
    if !first_ok || !name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_') {
        bail!("rig name `{name}`: use lowercase letters, digits and `_`, starting with a letter (e.g. `my_rig`)");
    }
    Ok(())
}

fn camel_case(name: &str) -> String {
    name.split('_')
        .filter(|part| !part.is_empty())
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map(|c| c.to_ascii_uppercase()).into_iter().chain(chars).collect::<String>()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_become_types_and_bad_names_are_refused() {
        assert_eq!(camel_case("my_rig2"), "MyRig2");
        for bad in ["", "My", "my-rig", "1rig", "rig!"] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
        let dir = tempfile::tempdir().unwrap();
        let files = new_rig("my_rig", &dir.path().join("r"), &Api::Version("0.1".into())).unwrap();
        assert_eq!(files.len(), 3);
        let lib = std::fs::read_to_string(&files[1]).unwrap();
        assert!(lib.contains("pub struct MyRigRun") && !lib.contains("{{"), "{lib}");
        let err = new_rig("my_rig", &dir.path().join("r"), &Api::Version("0.1".into())).unwrap_err();
        assert!(err.to_string().contains("is not empty"), "{err}");
    }
}
