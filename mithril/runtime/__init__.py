"""The service runtime every Mithril service shares: settings, gRPC server bootstrap,
interceptors, google.rpc errors, JSON logs and OpenTelemetry."""
