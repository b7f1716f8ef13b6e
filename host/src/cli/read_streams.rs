//! Reading results streams for the commands: one pass per file, in bounded memory. What a command keeps is
//! what its output needs (the newest records of each series, the calibrations), never every record.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::analysis::calibrate;
use crate::analysis::layout_floor::Floors;
use benchhost_record::history::{History, Needs};
use benchhost_record::nightly::{Nightly, NightlyKey, Series};
use benchhost_record::reader;
use benchhost_record::scan::{Scanned, scan};
use benchhost_record::{Kind, Record};

/// The history of `files`, with each file's skipped lines reported on stderr. A file without one readable
/// record is an error: a report of garbage must not look like a report of nothing.
pub(crate) fn history(files: &[PathBuf], needs: Needs) -> Result<History> {
    let mut history = History::new(needs);
    for file in files {
        history.read(file)?;
    }
    Ok(history)
}

/// [`history`] of `files` and, when `values` is true, [`nightly`] too, from the same pass (each line parsed
/// once): what a report that also shows change points reads.
pub(crate) fn history_beside_nightly(
    files: &[PathBuf],
    needs: Needs,
    values: bool,
) -> Result<(History, Option<BTreeMap<NightlyKey, Series>>)> {
    let (mut history, mut nightly) = (History::new(needs), values.then(Nightly::default));
    for file in files {
        history.read_beside(file, nightly.as_mut())?;
    }
    Ok((history, nightly.map(Nightly::into_sorted)))
}

/// Every measured value of `files`, per series in run order (see [`Nightly`]): the history change points
/// are found in; and every acknowledgement record of them, in their order.
pub(crate) fn nightly(files: &[PathBuf]) -> Result<(BTreeMap<NightlyKey, Series>, Vec<Record>)> {
    let mut nightly = Nightly::default();
    for file in files {
        nightly.read(file)?;
    }
    let acknowledgements = nightly.acknowledgements().into_iter().cloned().collect();
    Ok((nightly.into_sorted(), acknowledgements))
}

/// The newest `n` measurement or failure records of each series in `files` (and the newest verdicts per
/// series and metric), in the order they came: what every report of the newest runs reads as it would read
/// every record.
pub(crate) fn newest(files: &[PathBuf], n: usize) -> Result<Vec<Record>> {
    Ok(history(files, Needs::newest(n))?.into_records())
}

/// What a run or a comparison uses of the stream it appends to: the newest record of each series, every
/// calibration and acknowledgement, the layout floors, and the sizes (m) instruction counts used per rig, each once, the newest
/// use last. Nothing when the stream does not exist, is not a regular file (a device such as /dev/full reads
/// zeros without end) or cannot be read: a run says why when it appends.
#[derive(Debug, Default)]
pub(crate) struct Previous {
    pub newest: Vec<Record>,
    /// The newest records of each series, up to `between_runs::KEPT_RUNS`: how far its runs differ.
    pub history: Vec<Record>,
    pub calibrations: Vec<Record>,
    pub counted: Vec<(String, u64)>,
    /// The layout floors its comparisons over layouts measured.
    pub floors: Floors,
    /// Every acknowledgement record (`benchhost accept`), standing or revoked.
    pub acknowledgements: Vec<Record>,
}

/// See [`Previous`].
pub(crate) fn previous(path: &Path) -> Previous {
    if !path.is_file() {
        return Previous::default();
    }
    let mut history = History::new(Needs::newest(crate::analysis::between_runs::KEPT_RUNS));
    let (mut calibrations, mut counted, mut floors) = (Vec::new(), Vec::new(), Floors::default());
    let read = |entry: reader::Entry| {
        let record = entry.record;
        // A verdict may carry a layout floor (few records are verdicts: they alone are kept for it).
        let verdict = record.verdict.is_some().then(|| record.clone());
        let calibration = record.variant.contains_key(calibrate::MARK).then(|| record.clone());
        let count =
            record.cell.as_ref().and_then(|c| c.instructions.as_ref()).map(|c| (record.bench.clone(), c.iterations));
        (History::arrival(record), calibration, count, verdict)
    };
    let pass = scan(path, read, |item| {
        if let Scanned::Record((arrival, calibration, count, verdict)) = item {
            history.push(arrival);
            if let Some(verdict) = verdict {
                floors.learn(&verdict);
            }
            calibrations.extend(calibration);
            if let Some(count) = count {
                counted.retain(|c| *c != count);
                counted.push(count);
            }
        }
        Ok(())
    });
    match pass {
        Ok(()) => {
            // The newest of each series (and verdict series), in the order they came.
            let mut newest: Vec<_> =
                history.groups().into_iter().filter_map(|(_, g)| g.newest.last().cloned()).collect();
            newest.sort_by_key(|((_, arrival), _)| *arrival);
            let newest = newest.into_iter().map(|(_, r)| r).collect();
            let (acknowledgements, history): (Vec<Record>, Vec<Record>) =
                history.into_records().into_iter().partition(|r| r.kind == Kind::Acknowledgement);
            Previous { newest, history, calibrations, counted, floors, acknowledgements }
        }
        Err(_) => Previous::default(),
    }
}
