import Metrics
import Prometheus

/// Installs swift-metrics' process-wide factory, backed by a Prometheus
/// registry whose text exposition the gateway (`GET /metrics`) or a
/// `MetricsEndpoint` serves. Called once, by an executable's main.
public enum MetricsBootstrap {
    @discardableResult
    public static func bootstrap() -> PrometheusCollectorRegistry {
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        return registry
    }
}
