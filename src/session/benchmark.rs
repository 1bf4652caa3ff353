//! Proficiency benchmarks (issue #24): per-task, per-metric thresholds from expert sessions,
//! pass/fail marks and proficiency-based progression. Pure functions; the session library
//! (session::library) stores what they compute.
//!
//! **The rule** (docs/assessment-lab.md): for each benchmarked metric, over the task's expert
//! sessions, the mean μ and the sample standard deviation σ (n − 1); the threshold is
//! μ + 2σ for a metric where lower is better (time, path, jerk, errors, force, re-punctures)
//! and μ − 2σ where higher is better (score, economy), clipped to the metric's range (economy
//! in [0, 1], score in [0, 100], the rest ≥ 0). A session passes a metric when its value is on
//! the better side of the threshold or on it; a metric the session lacks (no skin entry, so no
//! entry error) fails. Proficiency-based progression as Gallagher et al. 2005 (Ann Surg
//! 241:364) define it: the trainee is proficient at the first attempt that completes a run of
//! N consecutive attempts passing every metric (N configurable, default 2).

use super::assess::Metrics;

/// Which way a metric improves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Lower values are better (the threshold is an upper limit).
    Lower,
    /// Higher values are better (the threshold is a lower limit).
    Higher,
}

impl Direction {
    /// "lower" or "higher" (as stored).
    pub fn name(self) -> &'static str {
        match self {
            Direction::Lower => "lower",
            Direction::Higher => "higher",
        }
    }

    /// The inverse of [`Direction::name`].
    pub fn from_name(s: &str) -> Option<Self> {
        match s {
            "lower" => Some(Direction::Lower),
            "higher" => Some(Direction::Higher),
            _ => None,
        }
    }
}

/// One benchmarked metric: its name (as stored, with its unit), which way is better, its
/// range (the threshold is clipped to it) and how to read it from the metrics.
pub struct MetricDef {
    /// Name with unit suffix, e.g. `path_length_m`.
    pub name: &'static str,
    /// Which way is better.
    pub direction: Direction,
    /// The metric's range [lo, hi].
    pub range: (f64, f64),
    /// The value of a session (None: the session has none).
    pub value: fn(&Metrics) -> Option<f64>,
}

/// The metrics every assessment is marked on, in the order reports show them.
pub const METRICS: &[MetricDef] = &[
    MetricDef {
        name: "score",
        direction: Direction::Higher,
        range: (0.0, 100.0),
        value: |m| Some(m.score),
    },
    MetricDef {
        name: "duration_s",
        direction: Direction::Lower,
        range: (0.0, f64::INFINITY),
        value: |m| Some(m.duration),
    },
    MetricDef {
        name: "path_length_m",
        direction: Direction::Lower,
        range: (0.0, f64::INFINITY),
        value: |m| Some(m.path_length),
    },
    MetricDef {
        name: "economy",
        direction: Direction::Higher,
        range: (0.0, 1.0),
        value: |m| Some(m.economy_of_motion),
    },
    MetricDef {
        name: "normalized_jerk",
        direction: Direction::Lower,
        range: (0.0, f64::INFINITY),
        value: |m| Some(m.normalized_jerk),
    },
    MetricDef {
        name: "entry_error_mm",
        direction: Direction::Lower,
        range: (0.0, f64::INFINITY),
        value: |m| m.entry_error_mm,
    },
    MetricDef {
        name: "exit_error_mm",
        direction: Direction::Lower,
        range: (0.0, f64::INFINITY),
        value: |m| m.exit_error_mm,
    },
    MetricDef {
        name: "max_tissue_force_n",
        direction: Direction::Lower,
        range: (0.0, f64::INFINITY),
        value: |m| Some(m.max_tissue_force),
    },
    MetricDef {
        name: "repunctures",
        direction: Direction::Lower,
        range: (0.0, f64::INFINITY),
        value: |m| Some(m.repunctures as f64),
    },
];

/// The definition of a benchmarked metric by name.
pub fn metric(name: &str) -> Option<&'static MetricDef> {
    METRICS.iter().find(|d| d.name == name)
}

/// Multiples of the experts' standard deviation between their mean and the threshold.
pub const SD_MULTIPLE: f64 = 2.0;

/// Proficiency: every metric passes on this many consecutive attempts, by default.
pub const DEFAULT_CONSECUTIVE: u32 = 2;

/// The rule in words, as stored with each benchmark.
pub const RULE: &str = "expert mean + 2 SD (lower is better) or mean - 2 SD (higher is better), sample SD (n - 1), clipped to the metric's range";

/// A metric's threshold from the experts.
#[derive(Clone, Debug, PartialEq)]
pub struct Threshold {
    /// The metric's name ([`METRICS`]).
    pub metric: String,
    /// Which way is better.
    pub direction: Direction,
    /// Expert sessions that had the metric.
    pub n: usize,
    /// Their mean and sample standard deviation.
    pub mean: f64,
    /// See `mean`.
    pub sd: f64,
    /// The threshold: the largest passing value (lower is better) or the smallest.
    pub limit: f64,
}

impl Threshold {
    /// Whether `value` passes (None: the session lacks the metric, a fail).
    pub fn passes(&self, value: Option<f64>) -> bool {
        match (value, self.direction) {
            (Some(v), Direction::Lower) => v <= self.limit,
            (Some(v), Direction::Higher) => v >= self.limit,
            (None, _) => false,
        }
    }
}

/// A session's benchmarked values by metric name (a metric it lacks is absent).
pub type Values = std::collections::BTreeMap<String, f64>;

/// The values of [`METRICS`] a session has (a value that is not finite counts as missing).
pub fn values(m: &Metrics) -> Values {
    METRICS
        .iter()
        .filter_map(|d| {
            (d.value)(m)
                .filter(|v| v.is_finite())
                .map(|v| (d.name.to_string(), v))
        })
        .collect()
}

/// Why no benchmark could be built.
#[derive(Debug, thiserror::Error)]
pub enum BenchmarkError {
    /// Fewer than two expert sessions (a standard deviation needs two).
    #[error("a benchmark needs at least 2 expert sessions of the task, got {0}")]
    TooFew(usize),
}

/// The thresholds of every metric at least two of the experts have (by [`RULE`]).
pub fn thresholds(experts: &[Values]) -> Result<Vec<Threshold>, BenchmarkError> {
    if experts.len() < 2 {
        return Err(BenchmarkError::TooFew(experts.len()));
    }
    let mut out = Vec::new();
    for d in METRICS {
        let v: Vec<f64> = experts
            .iter()
            .filter_map(|m| m.get(d.name).copied())
            .collect();
        if v.len() < 2 {
            continue;
        }
        let n = v.len() as f64;
        let mean = v.iter().sum::<f64>() / n;
        let sd = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
        let limit = match d.direction {
            Direction::Lower => mean + SD_MULTIPLE * sd,
            Direction::Higher => mean - SD_MULTIPLE * sd,
        }
        .clamp(d.range.0, d.range.1);
        out.push(Threshold {
            metric: d.name.to_string(),
            direction: d.direction,
            n: v.len(),
            mean,
            sd,
            limit,
        });
    }
    Ok(out)
}

/// One session's marks: (metric, its value, pass) per threshold.
pub fn marks(v: &Values, thresholds: &[Threshold]) -> Vec<(String, Option<f64>, bool)> {
    thresholds
        .iter()
        .map(|t| {
            let x = v.get(&t.metric).copied();
            (t.metric.clone(), x, t.passes(x))
        })
        .collect()
}

/// The attempt (1-based) at which a trainee became proficient: the first that completes `n`
/// consecutive attempts passing every metric (`all_pass[i]`: attempt i + 1 did); None: not
/// yet. `n` 0 counts as 1.
pub fn proficient_at(all_pass: &[bool], n: u32) -> Option<usize> {
    let n = n.max(1) as usize;
    let mut run = 0;
    for (i, &p) in all_pass.iter().enumerate() {
        run = if p { run + 1 } else { 0 };
        if run >= n {
            return Some(i + 1);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proficiency_needs_n_in_a_row() {
        assert_eq!(proficient_at(&[true, false, true, true], 2), Some(4));
        assert_eq!(proficient_at(&[true, false, true, false], 2), None);
        assert_eq!(proficient_at(&[false, true], 1), Some(2));
        assert_eq!(proficient_at(&[true, true, true], 3), Some(3));
    }

    #[test]
    fn thresholds_follow_the_direction_and_the_range() {
        let mk = |score: f64, econ: f64, t: f64| Metrics {
            score,
            economy_of_motion: econ,
            duration: t,
            ..Default::default()
        };
        // Durations 10, 12, 14: mean 12, SD 2, limit 16. Economy 0.9, 0.5, 0.1: mean 0.5,
        // SD 0.4, 0.5 - 0.8 clipped to 0. Score 90, 92, 94: 92 - 4 = 88.
        let t = thresholds(&[
            values(&mk(90.0, 0.9, 10.0)),
            values(&mk(92.0, 0.5, 12.0)),
            values(&mk(94.0, 0.1, 14.0)),
        ])
        .unwrap();
        let get = |n: &str| t.iter().find(|t| t.metric == n).unwrap();
        assert!((get("duration_s").limit - 16.0).abs() < 1e-12);
        assert_eq!(get("economy").limit, 0.0);
        assert!((get("score").limit - 88.0).abs() < 1e-12);
        assert!(get("duration_s").passes(Some(16.0)) && !get("duration_s").passes(Some(16.01)));
        assert!(get("score").passes(Some(88.0)) && !get("score").passes(Some(87.9)));
        // No expert had an entry: not benchmarked.
        assert!(t.iter().all(|t| t.metric != "entry_error_mm"));
        assert!(matches!(
            thresholds(&[values(&mk(1.0, 1.0, 1.0))]),
            Err(BenchmarkError::TooFew(1))
        ));
    }
}
