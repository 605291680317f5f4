/**
 * Registers the standard modules and adapters: the `http` app and its modules, the metrics
 * and tracing, the logging
 * encoders and writers, file-system storage, the `json5` adapter. Import it once.
 *
 * @module
 */
import "./logging/mod.ts";
import "./storage/register.ts";
import "./adapters/register.ts";
import "./http/mod.ts";
import "./metrics/mod.ts";
import "./tracing/mod.ts";
import "./listeners/mod.ts";
import "./tls/mod.ts";
import "./pki/mod.ts";
