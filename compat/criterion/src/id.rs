//! Benchmark ids as Criterion spells them: `group/function/parameter`, each part present or not.

use std::fmt;

/// Criterion's `BenchmarkId`: a function name and a parameter, either absent.
///
/// # Examples
/// ```
/// use benchhost_criterion::BenchmarkId;
/// assert_eq!(BenchmarkId::new("sort", 1000).to_string(), "sort/1000");
/// assert_eq!(BenchmarkId::from_parameter("64KiB").to_string(), "64KiB");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BenchmarkId {
    pub(crate) function_name: Option<String>,
    pub(crate) parameter: Option<String>,
}

impl BenchmarkId {
    /// An id of a function and the parameter it runs with.
    pub fn new<S: Into<String>, P: fmt::Display>(function_name: S, parameter: P) -> BenchmarkId {
        BenchmarkId { function_name: Some(function_name.into()), parameter: Some(parameter.to_string()) }
    }

    /// An id of a parameter alone (a group whose benchmarks differ only in their input).
    pub fn from_parameter<P: fmt::Display>(parameter: P) -> BenchmarkId {
        BenchmarkId { function_name: None, parameter: Some(parameter.to_string()) }
    }

    /// The same id as Criterion's own type, for a real `cargo bench`: `None` for a function name alone, which
    /// Criterion takes as a string (its `BenchmarkId::new("f", "")` would spell `f/`).
    pub(crate) fn to_criterion(&self) -> Option<criterion::BenchmarkId> {
        match (&self.function_name, &self.parameter) {
            (Some(f), Some(p)) => Some(criterion::BenchmarkId::new(f.clone(), p)),
            (None, Some(p)) => Some(criterion::BenchmarkId::from_parameter(p)),
            (_, None) => None,
        }
    }

    /// The function name of an id made of one (a string id).
    pub(crate) fn function_only(&self) -> Option<&str> {
        self.function_name.as_deref().filter(|_| self.parameter.is_none())
    }
}

impl fmt::Display for BenchmarkId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<&str> =
            [&self.function_name, &self.parameter].into_iter().flatten().map(String::as_str).collect();
        f.write_str(&parts.join("/"))
    }
}

/// What a group's `bench_function` and `bench_with_input` take as an id: a [`BenchmarkId`] or a string.
pub trait IntoBenchmarkId {
    /// The id.
    fn into_benchmark_id(self) -> BenchmarkId;
}

impl IntoBenchmarkId for BenchmarkId {
    fn into_benchmark_id(self) -> BenchmarkId {
        self
    }
}

impl<S: Into<String>> IntoBenchmarkId for S {
    fn into_benchmark_id(self) -> BenchmarkId {
        let function_name = self.into();
        assert!(!function_name.is_empty(), "Function name must not be empty.");
        BenchmarkId { function_name: Some(function_name), parameter: None }
    }
}

/// The full id of a benchmark in group `group` (Criterion's `group/function/parameter`).
pub(crate) fn full(group: &str, id: &BenchmarkId) -> String {
    let rest = id.to_string();
    if rest.is_empty() { group.to_owned() } else { format!("{group}/{rest}") }
}
