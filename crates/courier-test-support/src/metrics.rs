//! A `metrics` recorder for tests: it keeps every histogram value and counter increment with its
//! name and labels.

use metrics::{
    Counter, Gauge, Histogram, HistogramFn, Key, KeyName, Metadata, Recorder, SharedString, Unit,
};
use std::sync::{Arc, Mutex};

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
/// increment, in [`Recorded::value`]); gauges record nothing.
#[derive(Clone, Default)]
pub struct Capture(Arc<Mutex<Vec<Recorded>>>);

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
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
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
    seen: Arc<Mutex<Vec<Recorded>>>,
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
        self.seen
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(recorded);
    }
}

impl Recorder for Capture {
    fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn register_counter(&self, key: &Key, _: &Metadata<'_>) -> Counter {
        Counter::from_arc(Arc::new(One {
            key: key.clone(),
            seen: Arc::clone(&self.0),
        }))
    }
    fn register_gauge(&self, _: &Key, _: &Metadata<'_>) -> Gauge {
        Gauge::noop()
    }
    fn register_histogram(&self, key: &Key, _: &Metadata<'_>) -> Histogram {
        Histogram::from_arc(Arc::new(One {
            key: key.clone(),
            seen: Arc::clone(&self.0),
        }))
    }
}
