import { describe, expect, it } from "vitest";
import { Router } from "../src/http/router.js";

// The router answers paths that equal a template without parameters from a table built once; the
// answers must be those of the scan over every template, including where templates overlap.

describe("router", () => {
  const router = new Router<string>()
    .add("GET", "/a/{id}", "get-a-id")
    .add("POST", "/a/b", "post-a-b")
    .add("put", "/a/b", "put-a-b")
    .add("GET", "/c", "get-c");

  it("matches a literal path against every template, in the order they were added", () => {
    expect(router.match("GET", "/a/b")).toEqual({
      kind: "found",
      route: "get-a-id",
      params: { id: "b" },
      template: "/a/{id}",
    });
    expect(router.match("POST", "/a/b")).toEqual({
      kind: "found",
      route: "post-a-b",
      params: {},
      template: "/a/b",
    });
    expect(router.match("DELETE", "/a/b")).toEqual({
      kind: "method_not_allowed",
      allow: ["GET", "POST", "PUT"],
    });
    expect(router.match("POST", "/c")).toEqual({ kind: "method_not_allowed", allow: ["GET"] });
  });

  it("scans other paths as before", () => {
    expect(router.match("GET", "/a/%41")).toMatchObject({ kind: "found", params: { id: "A" } });
    expect(router.match("GET", "/a/%E0")).toEqual({ kind: "not_found" });
    expect(router.match("GET", "/c/")).toEqual({ kind: "not_found" });
  });

  it("sees templates added after a first match", () => {
    const late = new Router<string>().add("GET", "/x", "get-x");
    expect(late.match("POST", "/x")).toEqual({ kind: "method_not_allowed", allow: ["GET"] });
    late.add("POST", "/x", "post-x");
    expect(late.match("POST", "/x")).toMatchObject({ kind: "found", route: "post-x" });
  });
});
