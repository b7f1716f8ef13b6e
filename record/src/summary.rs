//! The descriptive statistics a record carries per metric, and how samples were taken. Types only;
//! `benchhost`'s stats computes them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How the iterations per sample grow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Sampling {
    /// Every sample runs the same calibrated number of iterations; estimate = median.
    #[default]
    Flat,
    /// Sample i runs i·d iterations; estimate = slope of the time over the iterations.
    Linear,
}

/// Tukey's fences: values beyond 1.5 IQR from the quartiles are mild outliers, beyond 3 IQR severe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Outliers {
    /// Below q1 − 3 IQR.
    pub low_severe: u32,
    /// Between q1 − 3 IQR and q1 − 1.5 IQR.
    pub low_mild: u32,
    /// Between q3 + 1.5 IQR and q3 + 3 IQR.
    pub high_mild: u32,
    /// Above q3 + 3 IQR.
    pub high_severe: u32,
}

/// Descriptive statistics of one metric over its samples or repetitions.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Summary {
    /// Number of values.
    pub n: usize,
    /// Median.
    pub median: f64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation (n − 1); 0 for one value.
    pub stddev: f64,
    /// Median absolute deviation, scaled by 1.4826 to estimate σ for normal data (as Criterion reports it).
    #[serde(default)]
    pub mad: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// Outliers by Tukey's fences.
    #[serde(default)]
    pub outliers: Outliers,
}

impl std::str::FromStr for Sampling {
    type Err = String;

    /// `flat` or `linear`, as records, `rigs.toml` and `--sampling` spell it.
    fn from_str(text: &str) -> Result<Sampling, String> {
        match text {
            "flat" => Ok(Sampling::Flat),
            "linear" => Ok(Sampling::Linear),
            _ => Err(format!("`{text}` is not flat or linear")),
        }
    }
}
