//! The real executor: each cell, duel process, pair or count is `benchhost __child` with its task, the rig's
//! library taken from this build's loader or, for a twin, from the other build's (`run --against DIR`).

use std::path::{Path, PathBuf};

use crate::plan::matrix::Cell;
use crate::plugin::loader::{Loader, Plugin};
use crate::plugin::variants::Variants;
use crate::proc::executor::{ChildRun, failed_spawn, run_child, run_child_under};
use crate::proc::protocol::{CellTask, CountTask, DuelTask, Message, Task};
use crate::run::context::{CountRun, DuelRun, Executor, PairRun};
use crate::run::valgrind::DEADLINE_FACTOR;

/// The real executor: `benchhost __child` per cell.
pub struct ChildExecutor<'a> {
    /// The benchhost binary to re-execute.
    pub exe: PathBuf,
    /// Where the rigs come from.
    pub loader: &'a Loader,
    /// Where the twins' rigs come from (`run --against DIR`).
    pub against: Option<&'a Loader>,
    /// `--quick`.
    pub quick: bool,
    /// The run's seed directories: one per library, named by its SHA-256, shared by every child that loads it
    /// (`None`: rigs seed every instance).
    pub seeds: Option<PathBuf>,
}

impl Executor for ChildExecutor<'_> {
    fn execute(&mut self, cell: &Cell, scratch: &Path, log: &Path, on_message: &mut dyn FnMut(&Message)) -> ChildRun {
        let task = Task::Cell(self.task(cell, scratch));
        run_child(&self.exe, &task, cell.deadline, Some(log), on_message)
    }

    fn execute_pair(&mut self, pair: PairRun<'_>) -> [ChildRun; 2] {
        let tasks = [0, 1]
            .map(|s| Task::Cell(CellTask { cpu: Some(pair.cpus[s]), ..self.task(pair.cells[s], pair.scratch[s]) }));
        let exe = &self.exe;
        std::thread::scope(|scope| {
            let run = |s: usize| {
                let (task, deadline, log) = (&tasks[s], pair.cells[s].deadline, pair.logs[s]);
                scope.spawn(move || run_child(exe, task, deadline, Some(log), &mut |_| {}))
            };
            let (a, b) = (run(0), run(1));
            [a, b].map(|h| h.join().unwrap_or_else(|_| failed_spawn("the thread watching the child panicked".into())))
        })
    }

    fn execute_count(&mut self, count: CountRun<'_>) -> ChildRun {
        let cell = self.task(count.cell, count.scratch);
        let task = Task::Count(CountTask { cell, totals: count.totals.to_owned(), near: count.near, most: count.most });
        let deadline = count.cell.deadline.saturating_mul(DEADLINE_FACTOR);
        run_child_under(&count.wrapper, &self.exe, &task, deadline, Some(count.log), &mut |_| {})
    }

    fn has_layouts(&self, cell: &Cell) -> bool {
        self.plugin(cell).variants().is_some()
    }

    fn links_layouts(&self, cell: &Cell) -> bool {
        self.plugin(cell).variants().is_some_and(Variants::can_link)
    }

    fn library_bytes(&self, cell: &Cell) -> Option<u64> {
        std::fs::metadata(&self.plugin(cell).path).ok().map(|m| m.len())
    }

    fn execute_duel(&mut self, duel: DuelRun<'_>, log: &Path, on_message: &mut dyn FnMut(&Message)) -> ChildRun {
        let [a, b] = duel.cells;
        // The run's sealed copies of both libraries, made at once on the first duel (hashing and copying a 151 MB
        // library takes ~0.17 s): their files are their own, so the two do not contend.
        crate::in_order::map_in_order(duel.cells.to_vec(), 2, |cell| self.plugin(cell).sealed().is_some());
        let mut sides =
            [0, 1].map(|s| CellTask { window_ns: duel.shape.window_ns, ..self.task(duel.cells[s], duel.scratch[s]) });
        for ((side, cell), seed) in sides.iter_mut().zip(duel.cells).zip(duel.layouts) {
            if let Some(seed) = seed {
                match self.layout(cell, seed) {
                    Ok(path) => (side.plugin_path, side.sealed) = (path, None),
                    Err(why) => return failed_spawn(format!("{why:#}")),
                }
            }
        }
        let task = Task::Duel(Box::new(DuelTask {
            sides,
            first: duel.first,
            warmup_ns: duel.shape.warmup_ns,
            sample_ns: duel.shape.sample_ns,
            pairs: duel.shape.pairs,
        }));
        run_child(&self.exe, &task, a.deadline.max(b.deadline), Some(log), on_message)
    }
}

impl ChildExecutor<'_> {
    /// The file of layout `seed` of `cell`'s library, linked now if it was not (the time it took is said on
    /// stderr: a comparison's relinks are counted apart from its measuring). The child copies and hashes it as
    /// it loads it, as it does any library it is not handed sealed.
    fn layout(&self, cell: &Cell, seed: u64) -> anyhow::Result<PathBuf> {
        let plugin = self.plugin(cell);
        let variants = plugin.variants().ok_or_else(|| {
            anyhow::anyhow!(
                "{}: no layout variants (its link was not kept: build it with `benchhost build`)",
                plugin.path.display()
            )
        })?;
        let started = std::time::Instant::now();
        let (path, linked) = variants.ensure(seed)?;
        if linked {
            crate::run::output::note(&format!(
                "linked layout seed {seed} of {} in {:.2} s",
                plugin.path.display(),
                started.elapsed().as_secs_f64()
            ));
        }
        Ok(path)
    }

    /// The library that runs `cell`: this build's, or `--against`'s for a twin.
    fn plugin(&self, cell: &Cell) -> &Plugin {
        let loader = if cell.against { self.against.expect("twins only exist with --against") } else { self.loader };
        loader.rig(&cell.rig).expect("cells are only made for loaded rigs").0
    }

    fn task(&self, cell: &Cell, scratch: &Path) -> CellTask {
        let plugin = self.plugin(cell);
        let sealed = plugin.sealed();
        // The bytes that run are the sealed ones: their hash names the seeds too (and the file is not hashed twice).
        let sha256 = sealed.map(|s| s.sha256.as_str()).or_else(|| plugin.sha256());
        CellTask {
            plugin_path: plugin.path.clone(),
            pin: plugin.pin.clone(),
            sealed: sealed.map(|sealed| (sealed.fd(), sealed.sha256.clone())),
            rig: cell.rig.clone(),
            params: cell.params.clone(),
            plan: cell.plan,
            scratch_dir: scratch.to_owned(),
            quick: self.quick,
            seed_dir: self.seeds.as_ref().zip(sha256).map(|(seeds, sha256)| seeds.join(&sha256[..16])),
            cpu: None,
            window_ns: None,
        }
    }
}
