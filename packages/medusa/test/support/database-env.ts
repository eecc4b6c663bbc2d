import { inject } from "vitest";

// Medusa's test runners find PostgreSQL through these variables.
const postgres = inject("postgres");
process.env.DB_HOST = postgres.host;
process.env.DB_PORT = String(postgres.port);
process.env.DB_USERNAME = postgres.user;
process.env.DB_PASSWORD = postgres.password;

// Tests make no telemetry calls.
process.env.MEDUSA_DISABLE_TELEMETRY ??= "true";
