import { startSandbox } from "@purchase-auth/sandbox";

// The benchmark's sandbox, in a process of its own (a core of its own, like a service on another
// host). Tells its parent the URL; the parent sets it up over the HTTP control routes.

const sandbox = await startSandbox({ historyLimit: 1_000 });
process.send?.({ url: sandbox.url });
process.on("disconnect", () => {
  void sandbox.close().then(() => process.exit(0));
});
