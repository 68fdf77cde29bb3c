// verifyWebhook against real deliveries of the project's worker code.
//
// Run by webhooks/tests/test_verify_helpers.py, which has a receiver on 127.0.0.1 capture
// them and sets PHONEINTEL_TEST_DELIVERIES to a JSON file:
//   {secret, newSecret, fresh, stale, rotated}, each delivery {body, headers}
// (`fresh` and `stale`, signed 10 minutes ago, by `secret`; then the secret was rotated to
// `newSecret`, and `rotated` carries the signatures of both).

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { PhoneIntelError, WebhookVerificationError, verifyWebhook } from "@phoneintel/client";

const path = process.env.PHONEINTEL_TEST_DELIVERIES;
assert.ok(path, "PHONEINTEL_TEST_DELIVERIES is not set: run this through make test");
const { secret, newSecret, fresh, stale, rotated } = JSON.parse(readFileSync(path, "utf8"));

test("a real delivery verifies, as bytes, as a string and with fetch Headers", () => {
  const event = verifyWebhook(Buffer.from(fresh.body), fresh.headers, secret);
  assert.equal(event.id, fresh.headers["webhook-id"]);
  assert.equal(event.type, "webhook.test");
  assert.deepEqual(event.actor, { type: "developer" });
  assert.deepEqual(verifyWebhook(fresh.body, fresh.headers, secret), event);
  assert.deepEqual(verifyWebhook(fresh.body, new Headers(fresh.headers), secret), event);
});

test("a tampered body fails", () => {
  const tampered = fresh.body.replace('"mode":"test"', '"mode":"live"');
  assert.notEqual(tampered, fresh.body);
  assert.throws(() => verifyWebhook(tampered, fresh.headers, secret), {
    name: "WebhookVerificationError",
    message: "No matching signature found",
  });
});

test("another secret fails, and the error is a PhoneIntelError", () => {
  assert.throws(
    () => verifyWebhook(fresh.body, fresh.headers, newSecret),
    (error) => error instanceof WebhookVerificationError && error instanceof PhoneIntelError,
  );
});

test("a timestamp older than 5 minutes fails though the signature is right", () => {
  assert.throws(() => verifyWebhook(stale.body, stale.headers, secret), {
    message: "Message timestamp too old",
  });
});

test("a missing header fails", () => {
  const { "webhook-signature": _, ...unsigned } = fresh.headers;
  assert.throws(() => verifyWebhook(fresh.body, unsigned, secret), {
    message: "Missing required headers",
  });
});

test("during a rotation either secret verifies", () => {
  assert.equal(rotated.headers["webhook-signature"].split(" ").length, 2);
  assert.equal(verifyWebhook(rotated.body, rotated.headers, secret).type, "webhook.test");
  assert.equal(verifyWebhook(rotated.body, rotated.headers, newSecret).type, "webhook.test");
});
