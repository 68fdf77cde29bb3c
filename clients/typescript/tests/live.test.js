// The client against a live gunicorn of the project on PostgreSQL and Redis.
//
// Run by clients/typescript/tests/test_typescript_client.py, which starts the server, loads
// the demo data, issues the keys and sets:
//   PHONEINTEL_BASE_URL, PHONEINTEL_API_KEY  the server and a key with room to spare
//   PHONEINTEL_TEST_SMALL_QUOTA_KEY          a key with a quota of 1 unit
//   PHONEINTEL_TEST_RATE_LIMITED_KEY         a key with a rate limit of 2 requests a minute
//   PHONEINTEL_TEST_SANDBOX_KEY              a test key (pi_beta_test_…)
//   PHONEINTEL_TEST_RESTRICTED_KEY           a key restricted to phone-risk
//   PHONEINTEL_TEST_FENCED_KEY               a key allowed only from 198.51.100.0/24
//   PHONEINTEL_TEST_MANAGE                   JSON argv of `manage.py` on the server's database

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import net from "node:net";
import { describe, test } from "node:test";

import {
  AddressNotPermittedError,
  APIConnectionError,
  AuthenticationError,
  BulkJobExpiredError,
  BulkJobNotFinishedError,
  Client,
  IdempotencyConflictError,
  InvalidApiKeyError,
  InvalidPhoneError,
  MissingApiKeyError,
  NotFoundError,
  PermissionDeniedError,
  ProductNotPermittedError,
  QuotaExceededError,
  RateLimitError,
  RateLimitedError,
  ServiceUnavailableError,
  ValidationError,
} from "@phoneintel/client";

const BASE_URL = required("PHONEINTEL_BASE_URL");
required("PHONEINTEL_API_KEY");
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function required(name) {
  const value = process.env[name];
  assert.ok(value, `${name} is not set: run this through make test`);
  return value;
}

function manage(...args) {
  const [command, ...prefix] = JSON.parse(required("PHONEINTEL_TEST_MANAGE"));
  execFileSync(command, [...prefix, ...args], { stdio: "pipe" });
}

/** `fetch` that records each request's method, path and Idempotency-Key. */
function recordingFetch(sent, after = async (response) => response) {
  return async (url, init) => {
    sent.push({
      method: init.method,
      path: new URL(url).pathname,
      idempotencyKey: init.headers["Idempotency-Key"],
    });
    return after(await fetch(url, init));
  };
}

async function unitsUsed(client = new Client()) {
  return (await client.account()).data.usage.unitsUsed;
}

describe("every method, found and not found", () => {
  // The key and the address come from PHONEINTEL_API_KEY and PHONEINTEL_BASE_URL.
  const client = new Client();

  test("phoneLookup", async () => {
    const found = await client.phoneLookup("+1 415 555 0123");
    assert.equal(found.status, 200);
    assert.equal(found.data.found, true);
    if (!found.data.found) return;
    assert.equal(found.data.phoneNumber, "+14155550123");
    assert.equal(found.data.reportCount, 12);
    assert.equal(found.data.risk.level, "high");
    assert.ok(found.data.risk.reasons.includes("recent_scam_or_fraud_reports"));
    assert.equal(found.meta.unitsCharged, 1);
    assert.match(found.requestId, /^req_/);
    assert.equal(found.requestId, found.meta.requestId);
    assert.equal(found.rateLimit.limit, 6000);

    const notFound = await client.phoneLookup("+15555555555");
    assert.deepEqual(notFound.data, { phoneNumber: "+15555555555", found: false });
    assert.equal(notFound.meta.unitsCharged, 1, "a not-found answer is charged");
  });

  test("phoneRisk", async () => {
    const found = await client.phoneRisk("+14155550188");
    assert.equal(found.data.found, true);
    assert.equal(found.data.risk.level, "low");
    assert.equal("reportCount" in found.data, false);
    const notFound = await client.phoneRisk("+15555555555");
    assert.equal(notFound.data.found, false);
  });

  test("carrierLookup, with a national number and its country", async () => {
    const found = await client.carrierLookup("07912 345679", { country: "GB" });
    assert.deepEqual(found.data, {
      phoneNumber: "+447912345679",
      found: true,
      carrier: { operatorName: "Giffgaff (ported)", numberType: "mobile", country: "GB" },
    });
    const notFound = await client.carrierLookup("+15555555555");
    assert.equal(notFound.data.found, false);
  });

  test("reversePhoneLookup", async () => {
    const found = await client.reversePhoneLookup("+442079460018");
    assert.deepEqual(found.data.business, { name: "Northwind Traders Ltd", verified: true });
    const unverified = await client.reversePhoneLookup("+442079460019");
    assert.deepEqual(unverified.data, { phoneNumber: "+442079460019", found: false });
  });

  test("phoneExposure: the bare {atRisk} gets found: true", async () => {
    const exposed = await client.phoneExposure("+447912345678");
    assert.deepEqual(exposed.data, { atRisk: true, found: true });
    const clean = await client.phoneExposure("+14155552671");
    assert.deepEqual(clean.data, { atRisk: false, found: true });
    const notCovered = await client.phoneExposure("+33612345678");
    assert.deepEqual(notCovered.data, { phoneNumber: "+33612345678", found: false });
  });

  test("bulk: items in input order, an invalid one inline and not charged", async () => {
    const sent = [];
    const bulkClient = new Client({ fetch: recordingFetch(sent) });
    const before = await unitsUsed();
    const answer = await bulkClient.bulk("phone-lookup", [
      "+14155550123",
      "12345",
      { phone: "+15555555555" },
      { phone: "020 7946 0018", country: "GB" },
    ]);
    assert.equal(answer.data.product, "phone-lookup");
    assert.deepEqual(
      answer.data.items.map((item) => item.index),
      [0, 1, 2, 3],
    );
    const [found, invalid, notFound, national] = answer.data.items;
    assert.equal(found.data.found, true);
    assert.equal(found.data.risk.level, "high");
    assert.equal(invalid.data, undefined);
    assert.equal(invalid.error.code, "invalid_phone");
    assert.match(invalid.error.message, /\/inputs\/1\/phone/);
    assert.deepEqual(notFound.data, { phoneNumber: "+15555555555", found: false });
    assert.equal(national.data.phoneNumber, "+442079460018");
    assert.equal(answer.meta.unitsCharged, 3);
    assert.equal((await unitsUsed()) - before, 3);
    assert.match(sent[0].idempotencyKey, UUID, "a bulk call carries a key the client made");
  });

  test("bulk on phone-exposure marks found items too", async () => {
    const answer = await client.bulk("phone-exposure", ["+447912345678", "+33612345678"]);
    assert.deepEqual(
      answer.data.items.map((item) => item.data),
      [
        { atRisk: true, found: true },
        { phoneNumber: "+33612345678", found: false },
      ],
    );
  });

  test("account: found with a key; a wrong key or none is its 401 class", async () => {
    const answer = await client.account();
    assert.equal(answer.data.quota.monthlyUnits, 10000);
    assert.equal(answer.data.rateLimit.limit, 6000);
    assert.ok(answer.data.usage.byProduct["phone-lookup"] >= 1);
    assert.equal(answer.meta.unitsCharged, 0);

    const unknown = new Client({ apiKey: "pi_beta_" + "0".repeat(38) });
    await assert.rejects(unknown.account(), (error) => {
      assert.ok(error instanceof InvalidApiKeyError);
      assert.ok(error instanceof AuthenticationError);
      assert.equal(error.status, 401);
      assert.equal(error.code, "invalid_api_key");
      assert.equal(error.headers.get("WWW-Authenticate")?.startsWith("Bearer"), true);
      return true;
    });
    const keyless = new Client({ apiKey: "" });
    await assert.rejects(keyless.account(), MissingApiKeyError);
  });

  test("products: public; a planned product has no endpoint", async () => {
    const answer = await new Client({ apiKey: "" }).products();
    const byValue = Object.fromEntries(answer.data.products.map((p) => [p.product, p]));
    assert.deepEqual(byValue["phone-risk"].endpoint, {
      method: "POST",
      path: "/v1/data/phone-risk-checks",
    });
    assert.equal(byValue["email-validation"].availability, "planned");
    assert.equal(byValue["email-validation"].endpoint, null);
    assert.equal(byValue["no-such-product"], undefined);
  });

  test("testNumbers: the sandbox's table, public", async () => {
    const keyless = new Client({ apiKey: "" });
    const answer = await keyless.testNumbers();
    assert.ok(answer.data.numbers.length > 30);
    assert.deepEqual(answer.data.numbers[0], {
      phone: "+12025550100",
      product: null,
      answers: "low risk, no reasons, 0 reports",
      description: answer.data.numbers[0].description,
    });
    for (const number of answer.data.numbers) {
      assert.match(number.phone, /^(\+\d+|12345)$/);
      assert.equal(typeof number.description, "string");
    }
  });
});

describe("events", () => {
  test("events(): every page, newest first, typed by type; a bad limit is a ValidationError", async () => {
    const asked = [];
    const client = new Client({
      fetch: async (url, init) => {
        asked.push(new URL(url).search);
        return fetch(url, init);
      },
    });
    const events = [];
    for await (const event of client.events({ limit: 1 })) events.push(event);
    // The key's developer was approved, then the key issued (live events; its sandbox
    // key's creation is a test event, read with a test key).
    assert.deepEqual(
      events.map((event) => [event.type, event.mode, event.actor.type]),
      [
        ["key.created", "live", "system"],
        ["access.approved", "live", "system"],
      ],
    );
    const [created] = events;
    assert.match(created.id, /^evt_[0-9A-Z]{26}$/);
    if (created.type === "key.created") {
      assert.equal(created.data.keyPrefix, process.env.PHONEINTEL_API_KEY.slice(0, 16));
    }
    assert.deepEqual(asked, ["?limit=1", `?limit=1&startingAfter=${created.id}`]);

    const page = await client.eventsPage({ type: "access.approved" });
    assert.equal(page.data.hasMore, false);
    assert.deepEqual(page.data.items, [events[1]]);
    assert.equal(page.meta.unitsCharged, 0);

    const sandbox = [];
    for await (const event of new Client({ apiKey: process.env.PHONEINTEL_TEST_SANDBOX_KEY }).events()) {
      sandbox.push(event);
    }
    assert.deepEqual(sandbox.map((event) => [event.type, event.mode]), [["key.created", "test"]]);

    await assert.rejects(client.eventsPage({ limit: 500 }), (error) => {
      assert.ok(error instanceof ValidationError);
      assert.equal(error.code, "validation_error");
      assert.equal(error.details[0].field, "limit");
      return true;
    });
  });
});

describe("errors", () => {
  const client = new Client();

  test("a 422 is its class, with what the envelope said", async () => {
    const retries = [];
    const strict = new Client({ onRetry: (event) => retries.push(event) });
    await assert.rejects(strict.phoneRisk("12345"), (error) => {
      assert.ok(error instanceof InvalidPhoneError);
      assert.ok(error instanceof ValidationError);
      assert.equal(error.status, 422);
      assert.equal(error.code, "invalid_phone");
      assert.match(error.requestId, /^req_/);
      assert.equal(error.requestId, error.headers.get("X-Request-Id"));
      assert.deepEqual(
        error.details.map((detail) => detail.field),
        ["/phone"],
      );
      assert.equal(error.retryAfter, null);
      return true;
    });
    await assert.rejects(client.phoneRisk("+14155550123", { country: "ZZ" }), (error) => {
      assert.equal(error.constructor, ValidationError);
      assert.equal(error.code, "validation_error");
      assert.equal(error.details[0].field, "/country");
      return true;
    });
    assert.equal(retries.length, 0, "a 422 is never retried");
  });

  test("a reused Idempotency-Key on another request: 409 conflict, not retried", async () => {
    const sent = [];
    const conflicted = new Client({ fetch: recordingFetch(sent) });
    const idempotencyKey = `conflict-${crypto.randomUUID()}`;
    await conflicted.phoneLookup("+14155550123", { idempotencyKey });
    await assert.rejects(
      conflicted.phoneLookup("+14155550188", { idempotencyKey }),
      IdempotencyConflictError,
    );
    assert.equal(sent.length, 2);
  });

  test("a restricted key's refusals are their 403 classes, not retried, not charged", async () => {
    const retries = [];
    const restricted = new Client({
      apiKey: required("PHONEINTEL_TEST_RESTRICTED_KEY"),
      onRetry: (event) => retries.push(event),
    });
    await assert.rejects(restricted.phoneLookup("+14155550123"), (error) => {
      assert.ok(error instanceof ProductNotPermittedError);
      assert.ok(error instanceof PermissionDeniedError);
      assert.equal(error.status, 403);
      assert.equal(error.code, "product_not_permitted");
      return true;
    });
    await assert.rejects(restricted.bulk("carrier-lookup", ["+14155550123"]), (error) => {
      assert.ok(error instanceof ProductNotPermittedError);
      assert.deepEqual(
        error.details.map((detail) => detail.field),
        ["/product"],
      );
      return true;
    });
    const { data } = await restricted.account();
    assert.deepEqual(data.key.products, ["phone-risk"]);
    assert.deepEqual(data.key.allowedIps, []);
    assert.equal(data.usage.unitsUsed, 0);

    const fenced = new Client({
      apiKey: required("PHONEINTEL_TEST_FENCED_KEY"),
      onRetry: (event) => retries.push(event),
    });
    await assert.rejects(fenced.account(), (error) => {
      assert.ok(error instanceof AddressNotPermittedError);
      assert.ok(error instanceof PermissionDeniedError);
      assert.equal(error.status, 403);
      assert.equal(error.code, "address_not_permitted");
      return true;
    });
    assert.equal(retries.length, 0);
  });

  test("quota_exceeded is never retried", async () => {
    const retries = [];
    const sent = [];
    const small = new Client({
      apiKey: required("PHONEINTEL_TEST_SMALL_QUOTA_KEY"),
      maxRetryWait: 10,
      onRetry: (event) => retries.push(event),
      fetch: recordingFetch(sent),
    });
    await small.phoneRisk("+14155550123");
    await assert.rejects(small.phoneRisk("+14155550123"), (error) => {
      assert.ok(error instanceof QuotaExceededError);
      assert.ok(error instanceof RateLimitError);
      assert.equal(error.status, 429);
      assert.equal(error.code, "quota_exceeded");
      return true;
    });
    assert.equal(sent.length, 2);
    assert.equal(retries.length, 0);
    assert.equal(await unitsUsed(small), 1);
  });

  test("rate_limited is retried after Retry-After, up to maxRetries", async () => {
    const retries = [];
    const limited = new Client({
      apiKey: required("PHONEINTEL_TEST_RATE_LIMITED_KEY"),
      maxRetries: 2,
      maxRetryWait: 10,
      onRetry: (event) => retries.push(event),
    });
    await limited.account();
    await limited.account();
    await assert.rejects(limited.account(), (error) => {
      assert.ok(error instanceof RateLimitedError);
      assert.equal(error.code, "rate_limited");
      assert.ok(error.retryAfter >= 1, "every 429 carries Retry-After");
      return true;
    });
    assert.deepEqual(
      retries.map((event) => [event.retry, event.error.code]),
      [
        [1, "rate_limited"],
        [2, "rate_limited"],
      ],
    );
    // Retry-After is seconds away; the cap (10 ms, plus up to 25 % jitter) wins.
    for (const event of retries)
      assert.ok(event.delay >= 10 && event.delay <= 12.5, `${event.delay}`);
  });
});

describe("retries never charge twice", () => {
  test("a 503 from a paused product, resumed mid-retry: one answer, one unit", async () => {
    const before = await unitsUsed();
    const sent = [];
    const retries = [];
    let resumed = false;
    manage("product", "pause", "phone-risk");
    try {
      const client = new Client({
        maxRetryWait: 50,
        onRetry: (event) => retries.push(event),
        fetch: recordingFetch(sent, async (response) => {
          if (response.status === 503 && !resumed) {
            manage("product", "resume", "phone-risk");
            resumed = true;
          }
          return response;
        }),
      });
      const answer = await client.phoneRisk("+14155550123");
      assert.equal(answer.status, 200);
      assert.equal(answer.data.found, true);
      assert.equal(answer.meta.unitsCharged, 1);
    } finally {
      if (!resumed) manage("product", "resume", "phone-risk");
    }
    assert.equal(retries.length, 1);
    const [{ error }] = retries;
    assert.ok(error instanceof ServiceUnavailableError);
    assert.equal(error.code, "service_unavailable");
    assert.ok(error.retryAfter >= 1);
    assert.equal(sent.length, 2);
    assert.match(sent[0].idempotencyKey, UUID);
    assert.equal(sent[1].idempotencyKey, sent[0].idempotencyKey, "the retry keeps its key");
    assert.equal((await unitsUsed()) - before, 1);
  });

  test("an answer lost on the way back: the retry is the stored answer, charged once", async () => {
    const proxy = await lossyProxy(BASE_URL);
    try {
      const before = await unitsUsed();
      const retries = [];
      const client = new Client({
        baseUrl: proxy.url,
        maxRetryWait: 10,
        onRetry: (event) => retries.push(event),
      });
      const answer = await client.phoneLookup("+14155550123");
      assert.equal(retries.length, 1);
      assert.ok(retries[0].error instanceof APIConnectionError);
      assert.equal(answer.replayed, true, "the server answered the retry from the first call");
      assert.equal(answer.data.found, true);
      assert.equal((await unitsUsed()) - before, 1);
    } finally {
      await proxy.close();
    }
  });
});

/**
 * A TCP proxy to the server that loses the first answer: the request reaches the server,
 * which runs (and charges) it, and the client's connection is cut when the answer starts.
 */
async function lossyProxy(upstreamUrl) {
  const upstreamAddress = new URL(upstreamUrl);
  let lose = 1;
  const sockets = new Set();
  const server = net.createServer((downstream) => {
    const loseThis = lose-- > 0;
    const upstream = net.connect(Number(upstreamAddress.port), upstreamAddress.hostname);
    for (const socket of [downstream, upstream]) {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => {});
    }
    downstream.pipe(upstream);
    upstream.on("data", (chunk) => {
      if (loseThis) {
        downstream.destroy();
        upstream.destroy();
      } else {
        downstream.write(chunk);
      }
    });
    upstream.on("close", () => downstream.destroy());
    downstream.on("close", () => upstream.destroy());
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}


describe("test keys", () => {
  const sandbox = () => new Client({ apiKey: required("PHONEINTEL_TEST_SANDBOX_KEY"), maxRetryWait: 2 });

  test("a test key works unchanged: the 503-then-200 number is retried once and charged once", async () => {
    const sent = [];
    const client = new Client({
      apiKey: required("PHONEINTEL_TEST_SANDBOX_KEY"),
      maxRetryWait: 2,
      fetch: recordingFetch(sent),
    });
    const answer = await client.phoneRisk("+12025550193");
    assert.equal(answer.status, 200);
    assert.equal(answer.meta.mode, "test");
    assert.equal(answer.data.found, true);
    assert.equal(sent.length, 2, "one 503, then the retry");
    assert.equal(sent[0].idempotencyKey, sent[1].idempotencyKey);
    const account = (await sandbox().account()).data;
    assert.equal(account.mode, "test");
    assert.equal(account.allowance, null);
    assert.equal(account.usage.unitsUsed, 1);
  });

  test("a number outside the table is TestNumberRequired, not retried", async () => {
    await assert.rejects(sandbox().phoneRisk("+14155550123"), (error) => {
      assert.ok(error instanceof ValidationError);
      assert.equal(error.code, "test_number_required");
      return true;
    });
  });
});

describe("bulkJobs", () => {
  const client = new Client();

  test("create answers a queued job; the same key and file the same job; results wait for it", async () => {
    const list = "phone,country\n+447912345678,\n020 7946 0018,gb\n12345,\n";
    const created = await client.bulkJobs.create("carrier-lookup", list, {
      idempotencyKey: "ts-bulk-job-0001",
    });
    assert.equal(created.status, 202);
    assert.match(created.data.id, /^job_[0-9A-Z]{26}$/);
    assert.equal(created.data.status, "queued");
    assert.equal(created.data.total, 3);
    assert.equal(created.meta.unitsCharged, 0);
    const again = await client.bulkJobs.create("carrier-lookup", list, {
      idempotencyKey: "ts-bulk-job-0001",
    });
    assert.equal(again.data.id, created.data.id);
    assert.equal(again.replayed, true);

    const got = await client.bulkJobs.get(created.data.id);
    assert.deepEqual(got.data, created.data);
    const listed = [];
    for await (const job of client.bulkJobs.list({ limit: 1 })) listed.push(job.id);
    assert.ok(listed.includes(created.data.id));

    await assert.rejects(
      (async () => {
        for await (const _ of client.bulkJobs.results(created.data.id));
      })(),
      (error) => error instanceof BulkJobNotFinishedError && error.status === 409,
    );
    const deleted = await client.bulkJobs.delete(created.data.id);
    assert.equal(deleted.data.status, "canceled");
    await assert.rejects(
      (async () => {
        for await (const _ of client.bulkJobs.results(created.data.id));
      })(),
      (error) => error instanceof BulkJobExpiredError && error.status === 410,
    );
    await assert.rejects(client.bulkJobs.get("job_01JD8ZKQ4T7W3R5V9X2Y6B1C0D"), NotFoundError);
  });

  test("a file that is no list is a ValidationError naming the problem", async () => {
    await assert.rejects(client.bulkJobs.create("carrier-lookup", "number\n+447912345678\n"), (error) => {
      assert.ok(error instanceof ValidationError);
      assert.equal(error.details[0].code, "no_phone_column");
      return true;
    });
  });
});
