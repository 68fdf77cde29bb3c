/**
 * The answers' types, each read from the generated contract (`openapi.ts`): a field the
 * server adds, renames or drops changes them at the next `make typescript-types`.
 */
import type { components, operations } from "./openapi.js";
type Schemas = components["schemas"];
/** The JSON body of an operation's 200 answer. */
export type Answer200<Op extends keyof operations> = operations[Op] extends {
    responses: {
        200: {
            content: {
                "application/json": infer Body;
            };
        };
    };
} ? Body : never;
/** A product value: `phone-lookup`, `phone-risk`, `carrier-lookup`, `reverse-phone-lookup`, `phone-exposure`. */
export type Product = Schemas["ProductEnum"];
/** The operation that runs each product on one number. */
export interface ProductOperations {
    "phone-lookup": "phoneLookup";
    "phone-risk": "phoneRisk";
    "carrier-lookup": "carrierLookup";
    "reverse-phone-lookup": "reversePhoneLookup";
    "phone-exposure": "phoneExposure";
}
/** A valid number with no result: charged like a found one. */
export type NotFoundResult = Schemas["NotFoundResult"];
/**
 * Marks a found result with `found: true`. Every found result has it in the contract but
 * `phone-exposure`'s, which is the bare `{atRisk}`: the client adds it there, so that every
 * result narrows on `found`.
 */
export type WithFound<R> = R extends {
    found: boolean;
} ? R : R & {
    found: true;
};
/** A product's result: found (its own fields) or not found, told apart by `found`. */
export type LookupResult<P extends Product> = WithFound<Answer200<ProductOperations[P]> extends {
    data: infer D;
} ? D : never>;
export type PhoneLookupResult = Extract<LookupResult<"phone-lookup">, {
    found: true;
}>;
export type PhoneRiskResult = Extract<LookupResult<"phone-risk">, {
    found: true;
}>;
export type CarrierLookupResult = Extract<LookupResult<"carrier-lookup">, {
    found: true;
}>;
export type ReversePhoneLookupResult = Extract<LookupResult<"reverse-phone-lookup">, {
    found: true;
}>;
export type PhoneExposureResult = Extract<LookupResult<"phone-exposure">, {
    found: true;
}>;
/** `meta` of a lookup: `requestId`, `unitsCharged` and the month's `usage`. */
export type LookupMeta = Answer200<"phoneLookup">["meta"];
export type Usage = Schemas["Usage"];
/** One input of a bulk call: a phone string, or `{phone, country}` for a national form. */
export type LookupInput = string | Schemas["LookupRequest"];
export type BulkItemError = Schemas["BulkItemError"];
/** One item of a bulk answer, at its input's `index`: a result, or an inline error (not charged). */
export type BulkItem<P extends Product> = {
    index: number;
    data: LookupResult<P>;
    error?: undefined;
} | {
    index: number;
    error: BulkItemError;
    data?: undefined;
};
export interface BulkResult<P extends Product> {
    product: P;
    items: BulkItem<P>[];
}
export type BulkMeta = Answer200<"bulkLookup">["meta"];
export type Account = Answer200<"getAccount">["data"];
export type AccountMeta = Answer200<"getAccount">["meta"];
export type ProductManifest = Answer200<"listProducts">["data"];
export type ProductManifestMeta = Answer200<"listProducts">["meta"];
/** Something that happened to the account: narrow on `type` for its own `data`. */
export type Event = Schemas["Event"];
export type EventType = Event["type"];
/** One page of `GET /v1/data/events`: `items` newest first, and whether older ones follow. */
export type EventsPage = Answer200<"listEvents">["data"];
export type EventsMeta = Answer200<"listEvents">["meta"];
/** `GET /v1/data/test-numbers`: the numbers a test key answers, and what each answers. */
export type TestNumbers = Answer200<"listTestNumbers">["data"];
export type TestNumbersMeta = Answer200<"listTestNumbers">["meta"];
/** A list answered on the server's workers: `client.bulkJobs.create(…)`. */
export type BulkJob = Schemas["BulkJob"];
export type BulkJobStatus = BulkJob["status"];
export type BulkJobMeta = Answer200<"getBulkJob">["meta"];
/** One page of `GET /v1/data/bulk-jobs`: `items` newest first, and whether older ones follow. */
export type BulkJobsPage = Answer200<"listBulkJobs">["data"];
/** The `RateLimit-Policy` and `RateLimit` headers of an answer. */
export interface RateLimit {
    policy: string;
    limit: number | null;
    windowSeconds: number | null;
    remaining: number | null;
    resetSeconds: number | null;
}
/** What every method returns. */
export interface APIResponse<D, M> {
    data: D;
    meta: M;
    /** The `X-Request-Id` of the answer (an idempotent replay keeps the first answer's). */
    requestId: string;
    status: number;
    /** Answered from an earlier request with the same Idempotency-Key, and not charged again. */
    replayed: boolean;
    rateLimit: RateLimit | null;
}
export {};
