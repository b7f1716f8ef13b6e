//! Independent work spread over a few threads, its results handed back in the order of its items.

use std::sync::Mutex;

/// `f` of every item, in the items' order, computed on `threads` threads (at least one, at most one an item):
/// each thread takes the next item left when it is free, so a few long items do not leave the others idle.
/// A panic in `f` is re-raised here.
pub fn map_in_order<T: Send, R: Send>(items: Vec<T>, threads: usize, f: impl Fn(T) -> R + Sync) -> Vec<R> {
    let threads = threads.clamp(1, items.len().max(1));
    let queue = Mutex::new(items.into_iter().enumerate());
    let work = || {
        let mut done = Vec::new();
        loop {
            // The lock is held only to take an item, never while `f` runs.
            let next = queue.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).next();
            let Some((at, item)) = next else { return done };
            done.push((at, f(item)));
        }
    };
    let mut done: Vec<(usize, R)> = std::thread::scope(|scope| {
        let others: Vec<_> = (1..threads).map(|_| scope.spawn(work)).collect();
        let mut done = work();
        for other in others {
            done.extend(other.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)));
        }
        done
    });
    done.sort_by_key(|(at, _)| *at);
    done.into_iter().map(|(_, result)| result).collect()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::map_in_order;

    #[test]
    fn work_done_on_several_threads_comes_back_in_order() {
        let items: Vec<u64> = (0..25).collect();
        for threads in [0, 1, 2, 5, 100] {
            let slow_first = map_in_order(items.clone(), threads, |i| {
                std::thread::sleep(Duration::from_millis(if i % 7 == 0 { 20 } else { 1 }));
                i * 10
            });
            assert_eq!(slow_first, items.iter().map(|i| i * 10).collect::<Vec<_>>(), "{threads} threads");
        }
        assert!(map_in_order(Vec::<u8>::new(), 2, |_| 0).is_empty());
    }
}
