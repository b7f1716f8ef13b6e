//! `--shard I/N`: a deterministic slice of a matrix, so N machines can run one logical run between them.
//!
//! Cell k of the expanded matrix (its `index`, counted before any slicing) belongs to shard `k mod N + 1`:
//! the same `rigs.toml` and command line give every machine the same cells in the same order, so the same
//! cell always lands in the same shard, and the slices differ in size by at most one cell (a hash would keep
//! a cell's shard across edits of the matrix, but could leave one machine with twice the work of another).

use std::fmt;
use std::str::FromStr;

/// Shard `index` of `count`, 1-based as written on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    /// Whether the cell at `cell_index` of the whole matrix is this shard's.
    pub fn contains(&self, cell_index: usize) -> bool {
        cell_index % self.count as usize == (self.index - 1) as usize
    }
}

impl FromStr for Shard {
    type Err = String;

    fn from_str(text: &str) -> Result<Shard, String> {
        let bad = || format!("`{text}` is not a shard I/N with 1 <= I <= N (e.g. 2/4)");
        let (index, count) = text.split_once('/').ok_or_else(bad)?;
        let (index, count): (u32, u32) =
            (index.trim().parse().map_err(|_| bad())?, count.trim().parse().map_err(|_| bad())?);
        if index == 0 || count == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_the_cells_evenly_and_parse_strictly() {
        let shards: Vec<Shard> = (1..=4).map(|i| format!("{i}/4").parse().unwrap()).collect();
        let sizes: Vec<usize> = shards.iter().map(|s| (0..14).filter(|&k| s.contains(k)).count()).collect();
        assert_eq!(sizes, [4, 4, 3, 3]);
        for k in 0..14 {
            assert_eq!(shards.iter().filter(|s| s.contains(k)).count(), 1, "cell {k}");
        }
        for bad in ["0/4", "5/4", "1/0", "1", "a/b", "1/4/2"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
        assert_eq!("3/8".parse::<Shard>().unwrap().to_string(), "3/8");
    }
}
