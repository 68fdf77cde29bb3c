// The retry rule, the timeouts and the error classes, on answers made here: the rules for
// answers a live server cannot be made to give on demand (409 idempotency_in_progress, an
// HTTP-date Retry-After, a proxy's page) and for a server that never answers.

import assert from "node:assert/strict";
import http from "node:http";
import { describe, test } from "node:test";

import {
  APIConnectionError,
  APIError,
  APITimeoutError,
  BadRequestError,
  Client,
  ConflictError,
  IdempotencyInProgressError,
  InternalServerError,
  PhoneIntelError,
  RateLimitError,
  ServiceUnavailableError,
} from "@phoneintel/client";

const BASE_URL = "http://127.0.0.1:9";

function envelope(status, code, headers = {}) {
  const body = { error: { code, message: `a ${code}`, requestId: "req_stub" } };
  return new Response(JSON.stringify(body), {
    status,
    headers: { "Content-Type": "application/json", "X-Request-Id": "req_stub", ...headers },
  });
}

function ok() {
  const usage = {
    period: "2026-11",
    unitsUsed: 1,
    unitsQuota: 10,
    unitsRemaining: 9,
    resetsAt: "2026-12-01T00:00:00Z",
  };
  const body = {
    data: {
      phoneNumber: "+14155550123",
      found: true,
      risk: { score: 0, level: "low", reasons: [] },
    },
    meta: { requestId: "req_ok", unitsCharged: 1, usage },
  };
  return new Response(JSON.stringify(body), { status: 200, headers: { "X-Request-Id": "req_ok" } });
}

/** A client whose fetch answers from `answers` in turn and records what it was sent. */
function scripted(answers, options = {}) {
  const sent = [];
  const retries = [];
  const client = new Client({
    baseUrl: BASE_URL,
    apiKey: "pi_beta_test_stub",
    maxRetryWait: 5,
    onRetry: (event) => retries.push(event),
    fetch: async (url, init) => {
      sent.push({ url, init });
      const next = answers.shift();
      if (next instanceof Error) throw next;
      return next();
    },
    ...options,
  });
  return { client, sent, retries };
}

describe("what is retried", () => {
  for (const [status, code, headers] of [
    [503, "service_unavailable", { "Retry-After": "0" }],
    [429, "rate_limited", { "Retry-After": "0" }],
    [409, "idempotency_in_progress", { "Retry-After": "0" }],
  ]) {
    test(`${status} ${code}, with the same Idempotency-Key`, async () => {
      const { client, sent, retries } = scripted([() => envelope(status, code, headers), ok]);
      const answer = await client.phoneRisk("+14155550123");
      assert.equal(answer.data.found, true);
      assert.equal(sent.length, 2);
      const keys = sent.map(({ init }) => init.headers["Idempotency-Key"]);
      assert.equal(keys[0], keys[1]);
      assert.equal(retries.length, 1);
      assert.equal(retries[0].error.code, code);
    });
  }

  test("a connection that failed before any answer", async () => {
    const refused = new TypeError("fetch failed", { cause: new Error("connect ECONNREFUSED") });
    const { client, sent, retries } = scripted([refused, ok]);
    await client.phoneLookup("+14155550123");
    assert.equal(sent.length, 2);
    assert.ok(retries[0].error instanceof APIConnectionError);
    assert.match(retries[0].error.message, /ECONNREFUSED/);
  });

  test("a server that is not there: APIConnectionError after maxRetries", async () => {
    const retries = [];
    // Port 9 (discard) has no listener here: each attempt is refused at once.
    const client = new Client({
      baseUrl: BASE_URL,
      maxRetries: 2,
      maxRetryWait: 5,
      onRetry: (e) => retries.push(e),
    });
    await assert.rejects(client.products(), (error) => {
      assert.ok(error instanceof APIConnectionError);
      assert.ok(error instanceof PhoneIntelError);
      assert.equal(error instanceof APIError, false);
      return true;
    });
    assert.equal(retries.length, 2);
  });
});

describe("what is never retried", () => {
  for (const [status, code] of [
    [429, "quota_exceeded"],
    [409, "idempotency_conflict"],
    [400, "invalid_json"],
    [401, "revoked_api_key"],
    [404, "not_found"],
    [413, "payload_too_large"],
    [422, "test_number_required"],
    [500, "server_error"],
  ]) {
    test(`${status} ${code}`, async () => {
      const { client, sent, retries } = scripted([() => envelope(status, code), ok]);
      await assert.rejects(client.phoneLookup("+14155550123"), (error) => {
        assert.equal(error.status, status);
        assert.equal(error.code, code);
        assert.equal(error.requestId, "req_stub");
        return true;
      });
      assert.equal(sent.length, 1);
      assert.equal(retries.length, 0);
    });
  }

  test("a proxy's page that is not the envelope", async () => {
    const page = () => new Response("<html>Bad gateway</html>", { status: 502 });
    const { client, sent } = scripted([page, ok]);
    await assert.rejects(client.account(), (error) => {
      assert.equal(error.constructor, APIError);
      assert.equal(error.code, "unexpected_response");
      return true;
    });
    assert.equal(sent.length, 1);
  });
});

describe("waits", () => {
  test("Retry-After is honoured, capped at maxRetryWait, with up to 25 % jitter", async () => {
    const { client, retries } = scripted(
      [() => envelope(503, "service_unavailable", { "Retry-After": "0.02" }), ok],
      { maxRetryWait: 1000 },
    );
    await client.phoneRisk("+14155550123");
    assert.ok(retries[0].delay >= 20 && retries[0].delay <= 25, `${retries[0].delay}`);
    assert.ok(retries[0].error instanceof ServiceUnavailableError);
    assert.equal(retries[0].error.retryAfter, 0.02);

    const capped = new Client({ baseUrl: BASE_URL, maxRetryWait: 1000 });
    for (let i = 0; i < 50; i++) {
      const delay = capped.retryDelay(1, 60);
      assert.ok(delay >= 1000 && delay <= 1250, `${delay}`);
    }
    const backoff = [1, 2, 3].map((retry) => capped.retryDelay(retry, null));
    [500, 1000, 1000].forEach((base, i) =>
      assert.ok(backoff[i] >= base && backoff[i] <= base * 1.25),
    );
  });

  test("an HTTP-date Retry-After is read as seconds from now", async () => {
    const later = new Date(Date.now() + 30_000).toUTCString();
    const { client } = scripted(
      [() => envelope(503, "service_unavailable", { "Retry-After": later })],
      {
        maxRetries: 0,
      },
    );
    await assert.rejects(client.account(), (error) => {
      assert.ok(error.retryAfter > 25 && error.retryAfter <= 30, `${error.retryAfter}`);
      return true;
    });
  });
});

describe("timeouts and the caller's signal", () => {
  async function silentServer() {
    const server = http.createServer(() => {});
    await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
    return {
      url: `http://127.0.0.1:${server.address().port}`,
      close: () => {
        server.closeAllConnections();
        return new Promise((resolve) => server.close(resolve));
      },
    };
  }

  test("no answer within the timeout: retried, then APITimeoutError", async () => {
    const server = await silentServer();
    try {
      const retries = [];
      const client = new Client({
        baseUrl: server.url,
        timeout: 50,
        maxRetries: 1,
        maxRetryWait: 5,
        onRetry: (e) => retries.push(e),
      });
      await assert.rejects(client.phoneLookup("+14155550123"), APITimeoutError);
      assert.equal(retries.length, 1);
      assert.ok(retries[0].error instanceof APITimeoutError);
      // A call's own timeout wins over the client's.
      const patient = new Client({ baseUrl: server.url, timeout: 60_000, maxRetries: 0 });
      const started = Date.now();
      await assert.rejects(patient.account({ timeout: 50 }), APITimeoutError);
      assert.ok(Date.now() - started < 5000);
    } finally {
      await server.close();
    }
  });

  test("the caller's signal aborts at once, and is never retried", async () => {
    const server = await silentServer();
    try {
      const retries = [];
      const client = new Client({ baseUrl: server.url, onRetry: (e) => retries.push(e) });
      await assert.rejects(
        client.phoneLookup("+14155550123", { signal: AbortSignal.timeout(50) }),
        (error) => error.name === "TimeoutError" && !(error instanceof PhoneIntelError),
      );
      const controller = new AbortController();
      controller.abort();
      await assert.rejects(client.account({ signal: controller.signal }), { name: "AbortError" });
      assert.equal(retries.length, 0);
    } finally {
      await server.close();
    }
  });

  test("an abort during a wait before a retry ends the wait", async () => {
    const controller = new AbortController();
    const { client, sent } = scripted(
      [() => envelope(503, "service_unavailable", { "Retry-After": "30" })],
      {
        maxRetryWait: 60_000,
        onRetry: () => setTimeout(() => controller.abort(), 10),
      },
    );
    const started = Date.now();
    await assert.rejects(client.account({ signal: controller.signal }), { name: "AbortError" });
    assert.ok(Date.now() - started < 5000);
    assert.equal(sent.length, 1);
  });
});

function restore(name, value) {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}

describe("classes and settings", () => {
  test("each status's class, and each code's under it", async () => {
    for (const [status, code, statusClass] of [
      [400, "idempotency_key_required", BadRequestError],
      [409, "idempotency_in_progress", ConflictError],
      [429, "rate_limited", RateLimitError],
      [500, "server_error", InternalServerError],
    ]) {
      const { client } = scripted([() => envelope(status, code)], { maxRetries: 0 });
      const error = await client.account().catch((caught) => caught);
      assert.ok(error instanceof statusClass, `${status} ${code}`);
      assert.ok(error instanceof APIError);
    }
    const { client } = scripted([() => envelope(409, "idempotency_in_progress")], {
      maxRetries: 0,
    });
    assert.ok((await client.account().catch((e) => e)) instanceof IdempotencyInProgressError);
    // A code this version does not know is its status's class, code as sent.
    const newer = scripted([() => envelope(422, "brand_new_code")], { maxRetries: 0 });
    const error = await newer.client.account().catch((caught) => caught);
    assert.equal(error.constructor.name, "ValidationError");
    assert.equal(error.code, "brand_new_code");
  });

  test("an unknown product is refused before anything is sent", async () => {
    const { client, sent } = scripted([ok]);
    await assert.rejects(client.lookup("phone-lookups", "+14155550123"), TypeError);
    assert.equal(sent.length, 0);
  });

  test("the key and the address come from the environment, and the key is never shown", async () => {
    const saved = [process.env.PHONEINTEL_API_KEY, process.env.PHONEINTEL_BASE_URL];
    try {
      process.env.PHONEINTEL_API_KEY = "pi_beta_test_from_the_environment";
      process.env.PHONEINTEL_BASE_URL = "http://127.0.0.1:9/";
      const sent = [];
      const client = new Client({ fetch: async (url, init) => (sent.push({ url, init }), ok()) });
      assert.equal(client.baseUrl, "http://127.0.0.1:9");
      await client.phoneLookup("+14155550123", { idempotencyKey: "my-own-key-1" });
      assert.equal(sent[0].url, "http://127.0.0.1:9/v1/data/phone-lookups");
      assert.equal(sent[0].init.headers.Authorization, "Bearer pi_beta_test_from_the_environment");
      assert.equal(sent[0].init.headers["Idempotency-Key"], "my-own-key-1");
      assert.deepEqual(JSON.parse(sent[0].init.body), { phone: "+14155550123" });
      const { inspect } = await import("node:util");
      assert.equal(inspect(client).includes("from_the_environment"), false);
      assert.equal(JSON.stringify(client).includes("from_the_environment"), false);
    } finally {
      restore("PHONEINTEL_API_KEY", saved[0]);
      restore("PHONEINTEL_BASE_URL", saved[1]);
    }
  });
});
