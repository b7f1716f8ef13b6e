//! The search of a bisection, apart from how a commit is built or judged: which commit to measure next and
//! what the answers so far say. Pure. As `git bisect`: GOOD is known good, BAD known bad, and the commits after
//! GOOD up to BAD are numbered 0..len (BAD is the last); a commit that cannot be judged (it does not build, its
//! rig fails) is skipped, and the answer is then a range when a skipped commit borders the first bad one.

use std::collections::BTreeSet;

/// What one commit turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Judged {
    /// Its change against GOOD is closer to none than to BAD's.
    Good,
    /// Its change against GOOD is closer to BAD's.
    Bad,
    /// It could not be judged.
    Skip,
}

/// The state of one bisection.
#[derive(Debug, Clone)]
pub struct Search {
    /// The last commit known good, `None` for GOOD itself.
    good: Option<usize>,
    /// The first commit known bad.
    bad: usize,
    skipped: BTreeSet<usize>,
}

/// What a bisection found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The commits that may be the first bad one, in order: one when the answer is exact, more when skipped
    /// commits sit just before the first commit known bad.
    pub candidates: Vec<usize>,
}

impl Search {
    /// A search over `len` commits (at least one: BAD), the last known bad.
    pub fn new(len: usize) -> Search {
        assert!(len > 0, "a bisection needs BAD among its commits");
        Search { good: None, bad: len - 1, skipped: BTreeSet::new() }
    }

    /// The next commit to measure: the untried one nearest the middle of the open range (the lower of two
    /// equally near), or `None` when the range holds no commit left to try.
    pub fn next(&self) -> Option<usize> {
        let first = self.good.map_or(0, |g| g + 1);
        let middle = (first + self.bad) / 2;
        let distance = |i: usize| (i.abs_diff(middle), i);
        (first..self.bad).filter(|i| !self.skipped.contains(i)).min_by_key(|i| distance(*i))
    }

    /// Takes the answer for commit `index` (one `next` gave).
    pub fn judge(&mut self, index: usize, judged: Judged) {
        match judged {
            Judged::Good => self.good = Some(index),
            Judged::Bad => self.bad = index,
            Judged::Skip => {
                self.skipped.insert(index);
            }
        }
    }

    /// What the answers say now (final once `next` is `None`).
    pub fn answer(&self) -> Answer {
        let first = self.good.map_or(0, |g| g + 1);
        Answer { candidates: (first..=self.bad).filter(|i| *i == self.bad || self.skipped.contains(i)).collect() }
    }

    /// The commits skipped so far, in order.
    pub fn skipped(&self) -> Vec<usize> {
        self.skipped.iter().copied().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a search where commits from `culprit` on are bad and `broken` ones cannot be judged; the order in
    /// which commits were measured, and the answer.
    fn bisect(len: usize, culprit: usize, broken: &[usize]) -> (Vec<usize>, Answer) {
        let mut search = Search::new(len);
        let mut measured = Vec::new();
        while let Some(i) = search.next() {
            measured.push(i);
            let judged = match (broken.contains(&i), i >= culprit) {
                (true, _) => Judged::Skip,
                (false, true) => Judged::Bad,
                (false, false) => Judged::Good,
            };
            search.judge(i, judged);
        }
        (measured, search.answer())
    }

    #[test]
    fn thirty_two_commits_take_five_steps_wherever_the_culprit_is() {
        for culprit in 0..32 {
            let (measured, answer) = bisect(32, culprit, &[]);
            assert!(measured.len() <= 5, "culprit {culprit}: {measured:?}");
            assert_eq!(answer.candidates, [culprit]);
        }
    }

    #[test]
    fn a_skipped_commit_is_stepped_around() {
        // Commits 0..6; the first middle, 2, does not build; 3 is tried instead.
        let (measured, answer) = bisect(6, 4, &[2]);
        assert_eq!(measured, [2, 1, 3, 4]);
        assert_eq!(answer.candidates, [4]);
    }

    #[test]
    fn a_skipped_commit_next_to_the_culprit_leaves_a_range() {
        let (measured, answer) = bisect(6, 3, &[2]);
        assert_eq!(answer.candidates, [2, 3], "{measured:?}");
    }

    #[test]
    fn bad_alone_needs_no_step() {
        let (measured, answer) = bisect(1, 0, &[]);
        assert!(measured.is_empty());
        assert_eq!(answer.candidates, [0]);
    }
}
