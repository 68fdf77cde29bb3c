// Every method of the client, as a TypeScript caller uses it. `make test` type-checks this
// file against the package's published declarations (`tsc -p examples`): each
// `@ts-expect-error` below is a mistake the types must refuse.

import {
  APIConnectionError,
  APIError,
  Client,
  InvalidPhoneError,
  RateLimitError,
  type APIResponse,
  type Account,
  type BulkItem,
  type ErrorCode,
  type LookupMeta,
  type LookupResult,
  type Product,
} from "@phoneintel/client";

const client = new Client({ timeout: 5_000, maxRetries: 3, maxRetryWait: 10_000 });
const signal = AbortSignal.timeout(30_000);

const lookup = await client.phoneLookup("+14155550123", { signal });
if (lookup.data.found) {
  const score: number = lookup.data.risk.score;
  const level: "low" | "medium" | "high" = lookup.data.risk.level;
  const reports: number = lookup.data.reportCount;
  console.log(score, level, reports, lookup.data.risk.reasons.join(", "));
} else {
  const phoneNumber: string = lookup.data.phoneNumber;
  // @ts-expect-error a not-found result has no risk
  console.log(phoneNumber, lookup.data.risk);
}
// @ts-expect-error risk exists only once `found` says so
console.log(lookup.data.risk);
const units: number = lookup.meta.unitsCharged + lookup.meta.usage.unitsRemaining;
const requestId: string = lookup.requestId;
console.log(units, requestId, lookup.replayed, lookup.rateLimit?.remaining);

const risk = await client.phoneRisk("+14155550188", { idempotencyKey: "my-retry-key-1" });
if (risk.data.found) {
  console.log(risk.data.risk.level);
  // @ts-expect-error phone-risk has no reportCount
  console.log(risk.data.reportCount);
}

const carrier = await client.carrierLookup("07912 345679", { country: "GB" });
if (carrier.data.found) {
  const { operatorName, numberType, country } = carrier.data.carrier;
  const mobile: boolean = numberType === "mobile";
  // @ts-expect-error numberType is the contract's enum, not any string
  const typo: boolean = numberType === "mobile_phone";
  console.log(operatorName, country, mobile, typo);
}

const business = await client.reversePhoneLookup("+442079460018");
console.log(business.data.found ? business.data.business.name : "no verified business");

const exposure = await client.phoneExposure("+447912345678");
if (exposure.data.found) {
  const atRisk: boolean = exposure.data.atRisk;
  console.log(atRisk);
} else {
  console.log(exposure.data.phoneNumber);
}

const bulk = await client.bulk("carrier-lookup", [
  "+447912345679",
  { phone: "020 7946 0018", country: "GB" },
  "12345",
]);
for (const item of bulk.data.items) {
  if (item.error) console.log(item.index, item.error.code, item.error.message);
  else if (item.data.found) console.log(item.index, item.data.carrier.operatorName);
  else console.log(item.index, "not found", item.data.phoneNumber);
}
const bulkItem: BulkItem<"carrier-lookup"> | undefined = bulk.data.items[0];
console.log(bulkItem?.index, bulk.meta.unitsCharged, bulk.data.product satisfies "carrier-lookup");
// @ts-expect-error bulk takes a product of the contract
await client.bulk("carrier-lookups", ["+447912345679"]);

const account: APIResponse<Account, unknown> = await client.account();
console.log(
  account.data.key.prefix,
  account.data.quota.monthlyUnits,
  account.data.usage.byProduct["phone-risk"],
);
console.log(account.data.rateLimit.limit, account.data.key.lastUsedAt ?? "never");

for await (const event of client.events({ type: "quota.threshold_reached", limit: 100 })) {
  if (event.type === "quota.threshold_reached") {
    const threshold: 80 | 100 = event.data.threshold;
    console.log(event.id, event.createdAt, threshold, event.data.unitsUsed, event.data.keyPrefix);
  } else if (event.type === "key.rolled") {
    console.log(event.data.newKeyPrefix);
    // @ts-expect-error a roll has no threshold
    console.log(event.data.threshold);
  }
}
const events = await client.eventsPage({ limit: 10, startingAfter: "evt_01JD8ZKQ4T7W3R5V9X2Y6B1C0D" });
console.log(events.data.hasMore, events.data.items.length, events.meta.unitsCharged);
// @ts-expect-error not an event type of the contract
client.events({ type: "key.deleted" });

const job = await client.bulkJobs.create("carrier-lookup", "phone\n+447912345678\n", {
  idempotencyKey: "crm-export-2026-11-28",
});
const finished = await client.bulkJobs.wait(job.data.id, {
  pollInterval: 2000,
  onProgress: (progress) => console.log(progress.processed, "of", progress.total),
});
const status: "succeeded" | "failed" | "canceled" | "queued" | "running" = finished.status;
console.log(status, finished.charged, finished.itemErrors, finished.expiresAt ?? "not yet");
for await (const line of client.bulkJobs.results(job.data.id, { format: "csv", startingAfter: 99 })) {
  console.log(line);
}
for await (const earlier of client.bulkJobs.list({ limit: 50 })) console.log(earlier.id);
await client.bulkJobs.delete(job.data.id);
// @ts-expect-error not a product
client.bulkJobs.create("email-validation", "phone\n");

const products = await client.products();
for (const product of products.data.products) {
  console.log(
    product.product,
    product.availability,
    product.unitCost ?? "planned",
    product.endpoint?.path,
  );
}

const testNumbers = await new Client({ apiKey: "pi_beta_test_…" }).testNumbers();
for (const number of testNumbers.data.numbers) {
  console.log(number.phone, number.product ?? "every product", number.description, number.answers);
}

// Any product by its value, typed by that value.
async function riskOf<P extends Product>(product: P, phone: string): Promise<LookupResult<P>> {
  const answer: APIResponse<LookupResult<P>, LookupMeta> = await client.lookup(product, phone);
  return answer.data;
}
console.log(await riskOf("phone-risk", "+14155550123"));

try {
  await client.phoneLookup("12345");
} catch (error) {
  if (error instanceof InvalidPhoneError) {
    const code: "invalid_phone" = error.code;
    console.log(code, error.status, error.requestId, error.details[0]?.field);
  } else if (error instanceof RateLimitError) {
    // The codes the contract gives a 429, and nothing else.
    const code: "rate_limited" | "quota_exceeded" | "unexpected_response" = error.code;
    console.log(code, error.retryAfter);
  } else if (error instanceof APIError) {
    console.log(describe(error.code), error.message);
  } else if (error instanceof APIConnectionError) {
    console.log("no answer:", error.message);
  } else {
    throw error;
  }
}

function describe(code: ErrorCode): string {
  switch (code) {
    case "quota_exceeded":
      return "the monthly quota is spent";
    case "service_unavailable":
      return "paused or down; retried already";
    // @ts-expect-error not a code of the contract
    case "quota_exhausted":
      return "never";
    default:
      return code;
  }
}
