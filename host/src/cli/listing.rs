//! What `benchhost list` and `benchhost plan` print: the plugins found with their rigs, parameters and
//! metrics, and the cells of a plan, as text or JSON.

use std::fmt::Write;

use serde_json::Value;

use crate::plugin::loader::Loader;
use crate::report::format::plain;

/// `benchhost list`: plugins, their rigs and parameters, and the files that did not load.
pub fn plugin_list(loader: &Loader) -> String {
    // Both plugin-api versions side by side: the host's (what it loads) and each plugin's.
    let mut out = format!("benchhost {}\n", version_line());
    if loader.plugins.is_empty() {
        out.push_str("no plugins found\n");
    }
    let shadowed = loader.shadowed();
    for plugin in &loader.plugins {
        let info = &plugin.info;
        let note =
            if shadowed.iter().any(|p| std::ptr::eq(*p, plugin)) { " (shadowed by an earlier plugin)" } else { "" };
        let _ = writeln!(
            out,
            "{} {} (built against plugin-api {}, {}) {}{note}",
            info.name,
            info.version,
            info.api_version,
            info.build.profile,
            plugin.path.display()
        );
        for rig in &info.rigs {
            let style = serde_json::to_value(rig.style).map(|v| plain(&v)).unwrap_or_default();
            let _ = writeln!(out, "  {} [{style}]: {}", rig.name, rig.doc);
            for p in &rig.params {
                let ty = serde_json::to_value(p.ty).map(|v| plain(&v)).unwrap_or_default();
                let mut constraint = String::new();
                if let Some(allowed) = &p.allowed {
                    let values: Vec<String> = allowed.iter().map(plain).collect();
                    constraint = format!(" one of {}", values.join("|"));
                } else if p.min.is_some() || p.max.is_some() {
                    constraint = format!(" in {}", range(p.min, p.max));
                }
                let doc = if p.doc.is_empty() { String::new() } else { format!(" — {}", p.doc) };
                let _ = writeln!(out, "    {} = {} ({ty}{constraint}){doc}", p.name, p.default);
            }
            let metrics: Vec<String> =
                rig.metrics.iter().map(|m| format!("{} [{}]", m.name, m.unit.as_str())).collect();
            let _ = writeln!(out, "    metrics: {}", metrics.join(", "));
        }
    }
    for rejected in &loader.rejected {
        let _ = writeln!(out, "skipped {}: {}", rejected.path.display(), rejected.reason);
    }
    out
}

/// `list --json`: the host's versions, every plugin with its path, build and rig descriptors, and the
/// libraries that did not load with the reason.
pub fn plugin_list_json(loader: &Loader) -> String {
    let plugins: Vec<Value> = loader
        .plugins
        .iter()
        .map(|p| serde_json::json!({ "path": p.path, "sha256": p.sha256(), "plugin": p.info }))
        .collect();
    let rejected: Vec<Value> =
        loader.rejected.iter().map(|r| serde_json::json!({ "path": r.path, "reason": r.reason })).collect();
    let host = serde_json::json!({
        "version": env!("CARGO_PKG_VERSION"),
        "plugin_api": benchhost_plugin_api::abi::API_VERSION,
    });
    let list = serde_json::json!({ "benchhost": host, "plugins": plugins, "rejected": rejected });
    serde_json::to_string_pretty(&list).expect("json")
}

/// `plan --json`: one object per cell: its index in the whole matrix, rig, variant as records will show it
/// (secrets redacted), sampling plan and deadline.
pub fn plan_json(cells: &[crate::plan::matrix::Cell]) -> String {
    let cells: Vec<Value> = cells
        .iter()
        .map(|c| {
            serde_json::json!({
                "index": c.index,
                "rig": c.rig,
                "variant": c.shown_params(),
                "label": c.label(),
                "plan": c.plan,
                "deadline_ms": c.deadline.as_millis() as u64,
            })
        })
        .collect();
    serde_json::to_string_pretty(&cells).expect("json")
}

/// `plan --interleave`: the comparisons a run would make, one line each (`at work_us=10: mode split vs
/// perthread`, with both cells' indices), grouped by rig and by what they hold equal.
pub fn plan_comparisons(cells: &[crate::plan::matrix::Cell], pairs: &[[usize; 2]]) -> String {
    let mut rows = Vec::new();
    let mut rigs: Vec<&str> = Vec::new();
    for [_, arm] in pairs {
        if !rigs.contains(&cells[*arm].rig.as_str()) {
            rigs.push(&cells[*arm].rig);
        }
    }
    for rig in rigs {
        let of_rig: Vec<&[usize; 2]> = pairs.iter().filter(|[_, arm]| cells[*arm].rig == rig).collect();
        let variants: Vec<_> =
            of_rig.iter().map(|[r, a]| (cells[*a].shown_params(), cells[*r].shown_params())).collect();
        let sides: Vec<_> = variants.iter().map(|(a, r)| (a, r)).collect();
        let mut lines: Vec<_> = crate::report::comparison::labels(&sides).into_iter().zip(&of_rig).collect();
        lines.sort_by(|a, b| a.0.held.cmp(&b.0.held));
        for (label, [reference, arm]) in lines {
            rows.push(format!("  {rig} {label} (cell {} vs cell {})\n", cells[*arm].index, cells[*reference].index));
        }
    }
    format!("{} comparisons:\n{}", pairs.len(), rows.concat())
}

/// `1..=64`, `1..` (no upper bound: none, or an integer type's maximum), `..=9`.
fn range(min: Option<f64>, max: Option<f64>) -> String {
    // An integer parameter bounded by i64::MAX has no bound a person needs to see (as f64 it prints as
    // 9223372036854776000).
    let bound = |b: Option<f64>| b.filter(|b| b.is_finite() && b.abs() < 9.0e18).map(|b| b.to_string());
    format!("{}..{}", bound(min).unwrap_or_default(), bound(max).map(|m| format!("={m}")).unwrap_or_default())
}

/// `0.1.0 (plugin-api 0.1.0)`: the plugin-api version this host loads plugins of, beside its own.
pub(crate) fn version_line() -> &'static str {
    static LINE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    LINE.get_or_init(|| {
        format!("{} (plugin-api {})", env!("CARGO_PKG_VERSION"), benchhost_plugin_api::abi::API_VERSION)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_show_only_bounds_that_bind() {
        // regression: `list` showed `1..=9223372036854776000`.
        assert_eq!(range(Some(1.0), Some(i64::MAX as f64)), "1..");
        assert_eq!(range(Some(1.0), Some(64.0)), "1..=64");
        assert_eq!(range(None, Some(0.5)), "..=0.5");
    }
}
