//! The rigs of a config file that no plugin found provides: left out of a run that did not name them, with the
//! one `cargo build` line that builds them all.

/// A rig of the config file that no plugin found provides, left out of a run that did not name it.
#[derive(Debug, Clone, PartialEq)]
pub struct Unbuilt {
    /// Rig name.
    pub rig: String,
    /// The cargo command that builds it, when the source tree is known.
    pub build: Option<String>,
}

/// `; build them with `cargo build ... -p A -p B`` for the rigs whose source tree is known: one command for all,
/// as their hints differ only in the package.
pub fn build_advice(unbuilt: &[Unbuilt]) -> String {
    let mut command = String::new();
    let mut packages: Vec<&str> = Vec::new();
    for hint in unbuilt.iter().filter_map(|u| u.build.as_deref()) {
        let Some((head, package)) = hint.rsplit_once(" -p ") else { continue };
        command = head.to_string();
        if !packages.contains(&package) {
            packages.push(package);
        }
    }
    match packages.is_empty() {
        true => String::new(),
        false => {
            let them = if unbuilt.iter().filter(|u| u.build.is_some()).count() == 1 { "it" } else { "them" };
            format!("; build {them} with `{command} -p {}`", packages.join(" -p "))
        }
    }
}
