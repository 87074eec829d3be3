//! Logging to stderr through tracing, and OpenTelemetry OTLP export of traces,
//! metrics and logs when the standard `OTEL_EXPORTER_OTLP_*` variables ask for
//! it (nothing is exported, and no exporter built, when they do not).

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_appender_tracing::layer::OpenTelemetryTracingBridge;
use opentelemetry_sdk::logs::SdkLoggerProvider;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::Layer as _;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// Log line format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// Keeps the exporters alive; flushes spans, metrics and logs when dropped.
pub struct TelemetryGuard {
    provider: Option<SdkTracerProvider>,
    meters: Option<SdkMeterProvider>,
    loggers: Option<SdkLoggerProvider>,
}

impl Drop for TelemetryGuard {
    fn drop(&mut self) {
        if let Some(p) = self.provider.take()
            && let Err(e) = p.shutdown()
        {
            eprintln!("hecate: telemetry shutdown: {e}");
        }
        if let Some(m) = self.meters.take()
            && let Err(e) = m.shutdown()
        {
            eprintln!("hecate: metrics shutdown: {e}");
        }
        if let Some(l) = self.loggers.take()
            && let Err(e) = l.shutdown()
        {
            eprintln!("hecate: logs shutdown: {e}");
        }
    }
}

/// Installs the global subscriber: `HECATE_LOG` (an EnvFilter) wins, else the
/// verbosity count picks warn / info / debug / trace. Logs always go to stderr.
pub fn init(verbosity: u8, format: LogFormat) -> TelemetryGuard {
    let default = match verbosity {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = std::env::var("HECATE_LOG")
        .ok()
        .and_then(|v| EnvFilter::try_new(v).ok())
        .unwrap_or_else(|| EnvFilter::new(format!("{default},h2=warn,hyper=warn,reqwest=warn")));
    let provider = otlp_provider();
    let meters = otlp_meters();
    let loggers = otlp_loggers();
    if let Some(m) = &meters {
        opentelemetry::global::set_meter_provider(m.clone());
        crate::telemetry::metrics::enable();
    }
    // Exported spans do not depend on stderr verbosity: the exporter gets
    // `hecate=info` unless HECATE_OTEL_LOG says otherwise.
    let otel = provider.as_ref().map(|p| {
        let otel_filter = std::env::var("HECATE_OTEL_LOG")
            .ok()
            .and_then(|v| EnvFilter::try_new(v).ok())
            .unwrap_or_else(|| EnvFilter::new("hecate=info"));
        tracing_opentelemetry::layer()
            .with_tracer(p.tracer("hecate"))
            .with_filter(otel_filter)
    });
    // Exported log records: Hecate's own events at `info` and above unless
    // HECATE_OTEL_LOG says otherwise (never the exporter's HTTP client, whose
    // logs would feed back into it).
    let logs = loggers.as_ref().map(|l| {
        let log_filter = std::env::var("HECATE_OTEL_LOG")
            .ok()
            .and_then(|v| EnvFilter::try_new(v).ok())
            .unwrap_or_else(|| EnvFilter::new("hecate=info"));
        OpenTelemetryTracingBridge::new(l).with_filter(log_filter)
    });
    let registry = tracing_subscriber::registry().with(otel).with(logs);
    let result = match format {
        LogFormat::Text => registry
            .with(
                tracing_subscriber::fmt::layer()
                    .with_writer(std::io::stderr)
                    .with_ansi(colour_on_stderr())
                    .with_target(false)
                    .with_filter(filter),
            )
            .try_init(),
        LogFormat::Json => registry
            .with(
                tracing_subscriber::fmt::layer()
                    .json()
                    .with_writer(std::io::stderr)
                    .with_ansi(false)
                    .with_filter(filter),
            )
            .try_init(),
    };
    if let Err(e) = result {
        eprintln!("hecate: logging already initialised: {e}");
    }
    TelemetryGuard {
        provider,
        meters,
        loggers,
    }
}

/// Colour only for a person at a terminal: never when stderr is a pipe or a file
/// (an editor's log panel, CI, `2> log`), and never when `NO_COLOR` is set.
fn colour_on_stderr() -> bool {
    use std::io::IsTerminal as _;
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// Whether one of `vars` is set to a non-empty value.
fn any_set(vars: &[&str]) -> bool {
    vars.iter()
        .any(|k| std::env::var(k).is_ok_and(|v| !v.is_empty()))
}

/// The resource every export names: `service.name = hecate`.
fn resource() -> opentelemetry_sdk::Resource {
    opentelemetry_sdk::Resource::builder()
        .with_service_name("hecate")
        .build()
}

/// The meter provider exporting metrics over OTLP/HTTP (every
/// `OTEL_METRIC_EXPORT_INTERVAL`, 60 s by default, and at exit).
fn otlp_meters() -> Option<SdkMeterProvider> {
    if !any_set(&[
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
    ]) {
        return None;
    }
    let exporter = match opentelemetry_otlp::MetricExporter::builder()
        .with_http()
        .build()
    {
        Ok(e) => e,
        Err(e) => {
            eprintln!("hecate: OTLP metrics exporter disabled: {e}");
            return None;
        }
    };
    Some(
        SdkMeterProvider::builder()
            .with_periodic_exporter(exporter)
            .with_resource(resource())
            .build(),
    )
}

fn otlp_provider() -> Option<SdkTracerProvider> {
    if !any_set(&[
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    ]) {
        return None;
    }
    let exporter = match opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .build()
    {
        Ok(e) => e,
        Err(e) => {
            eprintln!("hecate: OTLP exporter disabled: {e}");
            return None;
        }
    };
    Some(
        SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(resource())
            .build(),
    )
}

/// The logger provider exporting Hecate's log events over OTLP/HTTP (in
/// batches, and at exit), beside its spans and metrics.
fn otlp_loggers() -> Option<SdkLoggerProvider> {
    if !any_set(&[
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
    ]) {
        return None;
    }
    let exporter = match opentelemetry_otlp::LogExporter::builder()
        .with_http()
        .build()
    {
        Ok(e) => e,
        Err(e) => {
            eprintln!("hecate: OTLP logs exporter disabled: {e}");
            return None;
        }
    };
    Some(
        SdkLoggerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(resource())
            .build(),
    )
}
