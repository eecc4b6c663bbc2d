import { inject } from "vitest";

// Medusa's test runners find PostgreSQL through these variables.
const postgres = inject("postgres");
process.env.DB_HOST = postgres.host;
process.env.DB_PORT = String(postgres.port);
process.env.DB_USERNAME = postgres.user;
process.env.DB_PASSWORD = postgres.password;

// Medusa logs every loader and request at info level; keep the test output to errors.
process.env.LOG_LEVEL ??= "error";

// Tests make no telemetry calls.
process.env.MEDUSA_DISABLE_TELEMETRY ??= "true";
