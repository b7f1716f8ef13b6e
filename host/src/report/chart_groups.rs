//! The groups the HTML page draws a rig's newest arms in: its `[[rig.NAME]]` blocks, found again from the
//! arms alone. A block of `rigs.toml` is a product of its matrix axes with every other parameter held, and
//! two blocks may share an arm (the writer's `rows` sweep and its `batches` sweep both hold `rows=1000
//! batches=1`; the querier's seven shapes and its three shapes by three orders share the three unattested
//! ones). So the groups are products that may overlap: the one that covers the most arms not yet drawn, then
//! the largest, then the one of the fewest free parameters, until every arm is in one. A product over two
//! parameters may take some of each one's values (the querier's ordered shapes by order, not its lookups);
//! over more, all of them. Arms that report other metrics answer another question: kafka_topology's open
//! loop reports percentiles, so it is not drawn with its live feed although only `rate` sets them apart.

use std::collections::{BTreeMap, BTreeSet};

use crate::report::blocks::Block;
use crate::report::order;
use benchhost_record::Record;

/// Past this many arms or varying parameters, the groups are the partition of `blocks` (the search grows with
/// arms squared times two to the parameters).
const MOST_ARMS: usize = 64;
const MOST_KEYS: usize = 10;

/// The groups of a rig's newest records (one per series), each with what it holds and its members' names.
pub fn groups(records: &[&Record]) -> Vec<Block> {
    let variants: Vec<_> = records.iter().map(|r| &r.variant).collect();
    let grid = Grid::of(records);
    if records.len() > MOST_ARMS || grid.varying.len() > MOST_KEYS {
        return crate::report::blocks::blocks(&variants);
    }
    let candidates = grid.candidates();
    let mut covered = vec![false; records.len()];
    let mut chosen: Vec<Vec<usize>> = Vec::new();
    while covered.iter().any(|c| !c) {
        let score = |(free, members): &(usize, Vec<usize>)| {
            let uncovered = members.iter().filter(|&&i| !covered[i]).count();
            (uncovered, members.len(), std::cmp::Reverse(*free))
        };
        // An arm no product holds (the rig's only one) is a group of its own.
        let alone = || vec![covered.iter().position(|c| !c).expect("an arm is not covered")];
        let best =
            candidates.iter().max_by_key(|c| score(c)).filter(|c| score(c).0 > 0).map_or_else(alone, |c| c.1.clone());
        for &i in &best {
            covered[i] = true;
        }
        chosen.push(best);
    }
    let mut found: Vec<Block> = chosen
        .into_iter()
        .map(|mut members| {
            members.sort_by(|&a, &b| order::variant(variants[a], variants[b]));
            let within = grid.varying_in(&members);
            let label = grid
                .varying
                .iter()
                .filter(|&&k| k != grid.reports && !within.contains(&k))
                .filter_map(|&k| {
                    Some(format!(
                        "{}={}",
                        grid.keys[k],
                        crate::report::format::plain(variants[members[0]].get(grid.keys[k])?)
                    ))
                })
                .collect::<Vec<_>>()
                .join(" ");
            let of_block: Vec<_> = members.iter().map(|&i| variants[i]).collect();
            let (_, names) = crate::report::export::short_names(&of_block);
            Block { label, members, names }
        })
        .collect();
    found.sort_by(|a, b| order::variant(variants[a.members[0]], variants[b.members[0]]));
    found
}

/// Every arm's value of every parameter (and of what it reports), as small numbers.
struct Grid<'a> {
    keys: Vec<&'a str>,
    /// `values[arm][key]`.
    values: Vec<Vec<usize>>,
    /// The keys whose value differs between arms.
    varying: Vec<usize>,
    /// The key of what an arm reports: its metrics' names.
    reports: usize,
}

impl<'a> Grid<'a> {
    fn of(records: &[&'a Record]) -> Grid<'a> {
        const REPORTS: &str = "\u{0}reports";
        let mut keys: Vec<&str> = records.iter().flat_map(|r| r.variant.keys().map(String::as_str)).collect();
        keys.push(REPORTS);
        keys.sort_unstable();
        keys.dedup();
        let reports = keys.iter().position(|k| *k == REPORTS).expect("pushed");
        let mut ids: Vec<BTreeMap<String, usize>> = vec![BTreeMap::new(); keys.len()];
        let values: Vec<Vec<usize>> = records
            .iter()
            .map(|r| {
                keys.iter()
                    .enumerate()
                    .map(|(k, key)| {
                        let text = match k == reports {
                            true => r.metrics.keys().cloned().collect::<Vec<_>>().join(" "),
                            false => r.variant.get(*key).map_or("\u{0}-".into(), |v| v.to_string()),
                        };
                        let next = ids[k].len();
                        *ids[k].entry(text).or_insert(next)
                    })
                    .collect()
            })
            .collect();
        let varying = (0..keys.len()).filter(|&k| ids[k].len() > 1).collect();
        Grid { keys, values, varying, reports }
    }

    /// The keys whose value differs between `members`.
    fn varying_in(&self, members: &[usize]) -> Vec<usize> {
        let distinct = |k: usize| members.iter().map(|&i| self.values[i][k]).collect::<BTreeSet<_>>().len();
        self.varying.iter().copied().filter(|&k| distinct(k) > 1).collect()
    }

    /// Every product of arms around each arm, once each, with its count of free parameters.
    fn candidates(&self) -> Vec<(usize, Vec<usize>)> {
        let mut found: BTreeMap<Vec<usize>, usize> = BTreeMap::new();
        for arm in 0..self.values.len() {
            for mask in 1u32..1 << self.varying.len() {
                let free: Vec<usize> =
                    self.varying.iter().enumerate().filter(|(b, _)| mask >> b & 1 == 1).map(|(_, &k)| k).collect();
                let held = |i: &usize| {
                    self.varying.iter().all(|k| free.contains(k) || self.values[*i][*k] == self.values[arm][*k])
                };
                let around: Vec<usize> = (0..self.values.len()).filter(held).collect();
                let members = match free[..] {
                    [x, y] => self.largest_grid(&around, arm, [x, y]),
                    _ if self.is_product(&around) => around,
                    _ => continue,
                };
                let slot = found.entry(members).or_insert(free.len());
                *slot = (*slot).min(free.len());
            }
        }
        found.into_iter().map(|(members, free)| (free, members)).collect()
    }

    /// Whether `members` hold every combination of the values of the keys that vary between them.
    fn is_product(&self, members: &[usize]) -> bool {
        let combinations: usize = self
            .varying_in(members)
            .iter()
            .map(|&k| members.iter().map(|&i| self.values[i][k]).collect::<BTreeSet<_>>().len())
            .product();
        combinations == members.len()
    }

    /// Of `around` (arms that differ only in `x` and `y`), the largest full grid of some values of each that
    /// holds `arm`.
    fn largest_grid(&self, around: &[usize], arm: usize, [x, y]: [usize; 2]) -> Vec<usize> {
        let ys: Vec<usize> = around.iter().map(|&i| self.values[i][y]).collect::<BTreeSet<_>>().into_iter().collect();
        let present: BTreeSet<(usize, usize)> =
            around.iter().map(|&i| (self.values[i][x], self.values[i][y])).collect();
        let at = |xv: usize, yv: usize| present.contains(&(xv, yv));
        let xs: BTreeSet<usize> = around.iter().map(|&i| self.values[i][x]).collect();
        let mut best: (usize, Vec<usize>, Vec<usize>) = (0, vec![], vec![]);
        // Every set of y's values that holds the arm's (at most 2^11 of them), with the x values seen with all.
        let own = ys.iter().position(|&v| v == self.values[arm][y]).expect("the arm is around itself");
        for mask in 0u32..1 << ys.len().min(12) {
            if mask >> own & 1 == 0 {
                continue;
            }
            let chosen: Vec<usize> =
                ys.iter().enumerate().filter(|(b, _)| mask >> b & 1 == 1).map(|(_, &v)| v).collect();
            let with_all: Vec<usize> = xs.iter().copied().filter(|&xv| chosen.iter().all(|&yv| at(xv, yv))).collect();
            if with_all.contains(&self.values[arm][x]) && with_all.len() * chosen.len() > best.0 {
                best = (with_all.len() * chosen.len(), with_all, chosen);
            }
        }
        let (_, xs, ys) = best;
        around.iter().copied().filter(|&i| xs.contains(&self.values[i][x]) && ys.contains(&self.values[i][y])).collect()
    }
}

#[cfg(test)]
#[path = "chart_groups_tests.rs"]
mod tests;
