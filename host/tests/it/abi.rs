//! Libraries that are not plugins for this host cost one line each, never a crash or a layout dump.

use crate::support::{Sandbox, Skew, fault_plugins, skewed_plugin};

fn lines_about<'a>(text: &'a str, file: &str) -> Vec<&'a str> {
    text.lines().filter(|l| l.contains(file)).collect()
}

#[test]
fn plugins_built_against_another_plugin_api_are_refused_in_one_line() {
    let sandbox = Sandbox::new();
    let layout = skewed_plugin(Skew::Layout);
    let version = skewed_plugin(Skew::Version);
    let out =
        sandbox.cmd().args(["list", "--plugin-dir"]).arg(&layout).arg("--plugin-dir").arg(&version).assert().success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();

    let layout_lines = lines_about(&stdout, "libfixture_skew_layout.so");
    assert_eq!(layout_lines.len(), 1, "{stdout}");
    let line = layout_lines[0];
    assert!(line.starts_with("skipped "), "{line}");
    assert!(line.contains("built against plugin-api 0.1.1, this benchhost has 0.1.0: "), "{line}");
    assert!(line.len() < 600, "one readable line, not abi_stable's dump ({} bytes): {line}", line.len());

    let version_lines = lines_about(&stdout, "libfixture_skew_version.so");
    assert_eq!(version_lines.len(), 1, "{stdout}");
    assert!(
        version_lines[0].contains("built against plugin-api 0.2.0, this benchhost has 0.1.0: "),
        "{}",
        version_lines[0]
    );
    assert!(version_lines[0].contains("0.2.0") && version_lines[0].len() < 600);

    // Asking for the rig of a refused plugin is an error that says so, and names the cause once more.
    let run = sandbox.cmd().args(["run", "--plugin", "skewed", "--plugin-dir"]).arg(&layout).assert().code(2);
    let stderr = String::from_utf8_lossy(&run.get_output().stderr).into_owned();
    assert!(stderr.contains("note: skipped") && stderr.contains("error: --plugin: unknown rig `skewed`"), "{stderr}");
}

#[test]
fn files_that_are_not_plugins_are_skipped_with_a_note() {
    let sandbox = Sandbox::new();
    let dir = sandbox.path().join("plugins");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("libjunk.so"), b"this is not an ELF file").unwrap();
    // A real shared library that is not a benchhost plugin.
    let libz = ["/lib/x86_64-linux-gnu/libz.so.1", "/usr/lib/x86_64-linux-gnu/libz.so.1", "/lib64/libz.so.1"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists());
    if let Some(libz) = libz {
        std::fs::copy(libz, dir.join("libz.so")).unwrap();
    }
    // A real plugin cut off in the middle, as an interrupted copy leaves it.
    let healthy = std::fs::read(fault_plugins().join("libfixture_faults.so")).unwrap();
    std::fs::write(dir.join("libtruncated.so"), &healthy[..healthy.len() / 2]).unwrap();
    let out = sandbox.cmd().args(["list", "--plugin-dir"]).arg(&dir).assert().success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    let junk = lines_about(&stdout, "libjunk.so");
    assert_eq!(junk.len(), 1);
    assert!(junk[0].contains("not a loadable library"), "{}", junk[0]);
    let truncated = lines_about(&stdout, "libtruncated.so");
    assert_eq!(truncated.len(), 1);
    assert!(truncated[0].contains("not a loadable library"), "{}", truncated[0]);
    if libz.is_some() {
        let z = lines_about(&stdout, "libz.so");
        assert_eq!(
            z,
            [format!(
                "skipped {}: not a benchhost plugin (it exports no `benchhost_plugin_api_version`)",
                dir.join("libz.so").display()
            )]
        );
    }
}

#[test]
fn fixture_plugins_never_show_up_in_a_normal_list() {
    let sandbox = Sandbox::new();
    let out = sandbox.cmd().arg("list").assert().success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(!stdout.contains("fixture"), "{stdout}");
}
