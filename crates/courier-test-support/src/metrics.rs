//! A `metrics` recorder for tests: it keeps every histogram value and counter increment with its
//! name and labels, and each gauge's value.

use metrics::{
    Counter, Gauge, GaugeFn, Histogram, HistogramFn, Key, KeyName, Metadata, Recorder,
    SharedString, Unit,
};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// One value a histogram recorded.
#[derive(Clone, Debug, PartialEq)]
pub struct Recorded {
    /// The histogram's name.
    pub name: String,
    /// Its labels, in order.
    pub labels: Vec<(String, String)>,
    /// The value.
    pub value: f64,
}

/// A recorder that keeps every histogram value and counter increment (a counter's as its
/// increment, in [`Recorded::value`]), and each gauge's value ([`Capture::gauge`]).
#[derive(Clone, Default)]
pub struct Capture(Arc<Mutex<Kept>>);

/// What a [`Capture`] keeps.
#[derive(Default)]
struct Kept {
    recorded: Vec<Recorded>,
    gauges: HashMap<Key, f64>,
}

impl Capture {
    /// Runs `future` to its end on a current-thread tokio runtime of its own, with this recorder
    /// as the thread's (`metrics::with_local_recorder`).
    ///
    /// # Panics
    ///
    /// When the runtime cannot be built.
    pub fn run<F: std::future::Future>(&self, future: F) -> F::Output {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        metrics::with_local_recorder(self, || runtime.block_on(future))
    }

    /// What was recorded so far.
    pub fn recorded(&self) -> Vec<Recorded> {
        kept(&self.0).recorded.clone()
    }

    /// The value of the gauge `name` without labels: where its increments, decrements and sets
    /// have left it; `None` while none was made.
    pub fn gauge(&self, name: &str) -> Option<f64> {
        kept(&self.0)
            .gauges
            .get(&Key::from_name(name.to_owned()))
            .copied()
    }

    /// The handle of the counter, gauge or histogram `key`.
    fn one(&self, key: &Key) -> Arc<One> {
        Arc::new(One {
            key: key.clone(),
            kept: Arc::clone(&self.0),
        })
    }
}

/// The kept records, whatever a panicking holder left them as.
fn kept(kept: &Mutex<Kept>) -> MutexGuard<'_, Kept> {
    kept.lock().unwrap_or_else(|e| e.into_inner())
}

/// The value of the label `key`.
pub fn label<'a>(labels: &'a [(String, String)], key: &str) -> Option<&'a str> {
    labels
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

struct One {
    key: Key,
    kept: Arc<Mutex<Kept>>,
}

impl One {
    /// Moves the gauge's value with `change`.
    fn gauge(&self, change: impl FnOnce(&mut f64)) {
        change(kept(&self.kept).gauges.entry(self.key.clone()).or_default());
    }
}

impl metrics::CounterFn for One {
    fn increment(&self, value: u64) {
        #[allow(clippy::cast_precision_loss)]
        self.record(value as f64);
    }

    fn absolute(&self, value: u64) {
        #[allow(clippy::cast_precision_loss)]
        self.record(value as f64);
    }
}

impl HistogramFn for One {
    fn record(&self, value: f64) {
        let recorded = Recorded {
            name: self.key.name().to_owned(),
            labels: self
                .key
                .labels()
                .map(|l| (l.key().to_owned(), l.value().to_owned()))
                .collect(),
            value,
        };
        kept(&self.kept).recorded.push(recorded);
    }
}

impl GaugeFn for One {
    fn increment(&self, value: f64) {
        self.gauge(|gauge| *gauge += value);
    }

    fn decrement(&self, value: f64) {
        self.gauge(|gauge| *gauge -= value);
    }

    fn set(&self, value: f64) {
        self.gauge(|gauge| *gauge = value);
    }
}

impl Recorder for Capture {
    fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn register_counter(&self, key: &Key, _: &Metadata<'_>) -> Counter {
        Counter::from_arc(self.one(key))
    }
    fn register_gauge(&self, key: &Key, _: &Metadata<'_>) -> Gauge {
        Gauge::from_arc(self.one(key))
    }
    fn register_histogram(&self, key: &Key, _: &Metadata<'_>) -> Histogram {
        Histogram::from_arc(self.one(key))
    }
}
