//! Cachegrind's per-function counts, read from the output file of a counting fork (`--cache-sim=no`: one event,
//! the instructions executed), and the functions of m iterations: the difference between the two forks of a
//! pair, per iteration, as `run --instructions` takes the total.

use std::collections::BTreeMap;

use benchhost_record::FunctionCount;

/// Functions kept per record, the most instructions per iteration first.
pub const KEPT: usize = 200;

/// Instructions per iteration below which a function is not kept: less than one is the forks' own noise.
const LEAST: f64 = 0.5;

/// A function as Cachegrind names it: its demangled name and its file (`None` without debug info).
type Place = (String, Option<String>);

/// Instructions and first line of each function in one Cachegrind output file. Lines from inlined files
/// (`fi=`, `fe=`) count to the function they are inlined into.
pub fn functions(text: &str) -> BTreeMap<Place, (u64, Option<u32>)> {
    let mut out: BTreeMap<Place, (u64, Option<u32>)> = BTreeMap::new();
    let mut file: Option<String> = None;
    let mut current: Option<Place> = None;
    for line in text.lines() {
        if let Some(name) = line.strip_prefix("fl=") {
            file = (name != "???").then(|| name.to_owned());
            current = None;
        } else if let Some(name) = line.strip_prefix("fn=") {
            current = Some((without_hash(name).to_owned(), file.clone()));
        } else if let (Some(place), Some(first)) = (&current, line.bytes().next()) {
            if !first.is_ascii_digit() {
                continue;
            }
            let mut numbers = line.split_whitespace().map(|n| n.parse::<u64>().ok());
            let (Some(Some(at)), Some(Some(count))) = (numbers.next(), numbers.next()) else { continue };
            let entry = out.entry(place.clone()).or_insert((0, None));
            entry.0 += count;
            if at > 0 {
                entry.1 = Some(entry.1.map_or(at as u32, |l| l.min(at as u32)));
            }
        }
    }
    out
}

/// The functions of `iterations` iterations: the long fork's counts less the short fork's, per iteration, the
/// most first, those of less than half an instruction per iteration dropped, at most [`KEPT`].
pub fn per_iteration(short: &str, long: &str, iterations: u64) -> Vec<FunctionCount> {
    let before = functions(short);
    let mut kept: Vec<FunctionCount> = functions(long)
        .into_iter()
        .map(|((name, file), (count, line))| {
            let earlier = before.get(&(name.clone(), file.clone())).map_or(0, |(c, _)| *c);
            let per_iteration = (count as f64 - earlier as f64) / iterations.max(1) as f64;
            FunctionCount { name, file, line, per_iteration }
        })
        .filter(|f| f.per_iteration >= LEAST)
        .collect();
    kept.sort_by(|a, b| b.per_iteration.total_cmp(&a.per_iteration).then_with(|| a.name.cmp(&b.name)));
    kept.truncate(KEPT);
    kept
}

/// `name` without the `::h0123456789abcdef` hash of Rust's legacy mangling, which changes with every build.
fn without_hash(name: &str) -> &str {
    match name.rsplit_once("::h") {
        Some((head, hash)) if hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => head,
        _ => name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHORT: &str = "desc: I1 cache:\ncmd: x\nevents: Ir\nfl=???\nfn=main\n0 100\nfl=/src/lib.rs\n\
                         fn=rig::work::h0123456789abcdef\n40 1000\n41 24\nfi=/rustc/slice.rs\n900 6\nfe=/src/lib.rs\n\
                         summary: 1130\n";
    const LONG: &str = "desc: I1 cache:\ncmd: x\nevents: Ir\nfl=???\nfn=main\n0 100\nfl=/src/lib.rs\n\
                        fn=rig::work::h0123456789abcdef\n40 2000\n41 48\nfi=/rustc/slice.rs\n900 12\nfe=/src/lib.rs\n\
                        fn=rig::injected\n140 640\nsummary: 2800\n";

    #[test]
    fn each_function_sums_its_lines_and_its_inlined_code() {
        let counted = functions(SHORT);
        let work = counted[&("rig::work".to_string(), Some("/src/lib.rs".to_string()))];
        assert_eq!(work, (1030, Some(40)), "1000 + 24 + 6 inlined, from line 40");
        assert_eq!(counted[&("main".to_string(), None)], (100, None), "no file, no line without debug info");
    }

    #[test]
    fn the_iterations_functions_are_the_long_fork_less_the_short() {
        let per = per_iteration(SHORT, LONG, 10);
        let names: Vec<(&str, f64)> = per.iter().map(|f| (f.name.as_str(), f.per_iteration)).collect();
        // work: (2060 - 1030) / 10; injected: 640 / 10; main ran once in each fork: 0, dropped.
        assert_eq!(names, [("rig::work", 103.0), ("rig::injected", 64.0)]);
        assert_eq!((per[1].file.as_deref(), per[1].line), (Some("/src/lib.rs"), Some(140)));
    }
}
