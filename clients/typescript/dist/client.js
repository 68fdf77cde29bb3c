/**
 * `Client`: one method per operation of the contract, with retries that never charge twice.
 *
 * Retry rule (the Python client's): 429 `rate_limited`, 503, 409 `idempotency_in_progress`
 * and failures with no answer are retried, after `Retry-After` when the server sent one,
 * else after an exponential backoff; capped and jittered. Nothing else is: not
 * `quota_exceeded` (the quota comes back next month), not any other 4xx. It is safe because
 * every call is either a GET or a lookup carrying an Idempotency-Key made once per call and
 * kept across its retries: the server answers a retry of a request it already ran from the
 * stored answer, and charges nothing for it.
 */
import { APIConnectionError, APIError, APITimeoutError, errorFrom, } from "./errors.js";
export const VERSION = "0.1.0";
export const ENV_API_KEY = "PHONEINTEL_API_KEY";
export const ENV_BASE_URL = "PHONEINTEL_BASE_URL";
export const DEFAULT_BASE_URL = "http://127.0.0.1:8000";
export const DEFAULT_TIMEOUT = 10_000;
export const DEFAULT_MAX_RETRIES = 3;
export const DEFAULT_MAX_RETRY_WAIT = 30_000;
const BACKOFF_BASE = 500;
const JITTER = 0.25;
/** Each product's single-lookup path; the compiler checks each is a path of the contract. */
export const PRODUCT_PATHS = {
    "phone-lookup": "/v1/data/phone-lookups",
    "phone-risk": "/v1/data/phone-risk-checks",
    "carrier-lookup": "/v1/data/carrier-lookups",
    "reverse-phone-lookup": "/v1/data/reverse-phone-lookups",
    "phone-exposure": "/v1/data/phone-exposure-checks",
};
const BULK_PATH = "/v1/data/bulk-lookups";
const ACCOUNT_PATH = "/v1/data/account";
const EVENTS_PATH = "/v1/data/events";
const PRODUCTS_PATH = "/v1/data/products";
const BULK_JOBS_PATH = "/v1/data/bulk-jobs";
const BULK_JOB_PATH = "/v1/data/bulk-jobs/{job_id}";
const BULK_JOB_RESULTS_PATH = "/v1/data/bulk-jobs/{job_id}/results";
const FINISHED = ["succeeded", "canceled", "failed"];
// Not in the served document yet (the sandbox is being built); a plain string until it is.
const TEST_NUMBERS_PATH = "/v1/data/test-numbers";
export class Client {
    baseUrl;
    timeout;
    maxRetries;
    maxRetryWait;
    /** The RateLimit headers of the latest answer that had them. */
    rateLimit = null;
    // Private (#) so that neither console.log nor util.inspect ever shows the key.
    #apiKey;
    #fetch;
    #onRetry;
    constructor(options = {}) {
        this.#apiKey = options.apiKey ?? (process.env[ENV_API_KEY] || null);
        const baseUrl = (options.baseUrl || process.env[ENV_BASE_URL] || DEFAULT_BASE_URL).replace(/\/+$/, "");
        new URL(baseUrl); // a malformed address fails here, not as a retried connection error
        this.baseUrl = baseUrl;
        this.timeout = options.timeout ?? DEFAULT_TIMEOUT;
        this.maxRetries = options.maxRetries ?? DEFAULT_MAX_RETRIES;
        this.maxRetryWait = options.maxRetryWait ?? DEFAULT_MAX_RETRY_WAIT;
        if (this.timeout <= 0 || this.maxRetries < 0 || this.maxRetryWait < 0) {
            throw new RangeError("timeout must be positive; maxRetries and maxRetryWait not negative");
        }
        this.#fetch = options.fetch ?? globalThis.fetch;
        this.#onRetry = options.onRetry;
    }
    /** Any product by its value; the methods below are the same, one per product. */
    async lookup(product, phone, options = {}) {
        const path = PRODUCT_PATHS[product];
        if (path === undefined) {
            throw new TypeError(`Unknown product ${JSON.stringify(product)}; one of ${Object.keys(PRODUCT_PATHS).join(", ")}`);
        }
        const { country, idempotencyKey, ...request } = options;
        return this.#lookupCall({ method: "POST", path, body: lookupInput(country ? { phone, country } : phone), ...request }, idempotencyKey, withFound);
    }
    /** Risk score, level and reasons, with the number of reports on record. */
    phoneLookup(phone, options) {
        return this.lookup("phone-lookup", phone, options);
    }
    /** Risk score, level and reasons. */
    phoneRisk(phone, options) {
        return this.lookup("phone-risk", phone, options);
    }
    /** Operator, number type and country. */
    carrierLookup(phone, options) {
        return this.lookup("carrier-lookup", phone, options);
    }
    /** The verified business registered to the number. */
    reversePhoneLookup(phone, options) {
        return this.lookup("reverse-phone-lookup", phone, options);
    }
    /** Whether the number appears in exposure data (`atRisk`). */
    phoneExposure(phone, options) {
        return this.lookup("phone-exposure", phone, options);
    }
    /**
     * One bulk call: 1 to 50 inputs of one product, answered in input order. An invalid input
     * is an item with an inline `error` and is not charged.
     */
    bulk(product, inputs, options = {}) {
        const { idempotencyKey, ...request } = options;
        return this.#lookupCall({
            method: "POST",
            path: BULK_PATH,
            body: { product, inputs: inputs.map(lookupInput) },
            ...request,
        }, idempotencyKey, (data) => {
            const result = data;
            const items = result.items.map((item) => item.data === undefined ? item : { ...item, data: withFound(item.data) });
            return { ...result, items };
        });
    }
    /** Bulk jobs: upload a list, follow it, stream its results, delete it. */
    bulkJobs = {
        create: (product, file, options = {}) => {
            const { contentType = "text/csv", idempotencyKey, ...request } = options;
            const path = `${BULK_JOBS_PATH}?${new URLSearchParams({ product })}`;
            return this.#lookupCall({ method: "POST", path, raw: { content: file, contentType }, ...request }, idempotencyKey, (data) => data);
        },
        list: (options = {}) => this.#bulkJobs(options),
        page: (options = {}) => {
            const { limit, startingAfter, ...request } = options;
            const query = new URLSearchParams();
            if (limit !== undefined)
                query.set("limit", String(limit));
            if (startingAfter !== undefined)
                query.set("startingAfter", startingAfter);
            const path = query.toString() ? `${BULK_JOBS_PATH}?${query}` : BULK_JOBS_PATH;
            return this.#call({ method: "GET", path, ...request }, (data) => data);
        },
        get: (jobId, options = {}) => this.#call({ method: "GET", path: jobPath(jobId), ...options }, (data) => data),
        delete: (jobId, options = {}) => this.#call({ method: "DELETE", path: jobPath(jobId), ...options }, (data) => data),
        wait: async (jobId, options = {}) => {
            const { pollInterval = 1000, onProgress, ...request } = options;
            for (;;) {
                const job = (await this.bulkJobs.get(jobId, request)).data;
                onProgress?.(job);
                if (FINISHED.includes(job.status))
                    return job;
                await sleep(pollInterval, request.signal);
            }
        },
        results: (jobId, options = {}) => this.#bulkJobResults(jobId, options),
    };
    async *#bulkJobs(options) {
        let startingAfter;
        for (;;) {
            const page = (await this.bulkJobs.page(startingAfter ? { ...options, startingAfter } : options)).data;
            yield* page.items;
            const last = page.items.at(-1);
            if (!page.hasMore || last === undefined)
                return;
            startingAfter = last.id;
        }
    }
    async *#bulkJobResults(jobId, options) {
        const { format = "ndjson", startingAfter, signal } = options;
        const query = startingAfter === undefined ? "" : `?startingAfter=${startingAfter}`;
        const headers = {
            Accept: format === "csv" ? "text/csv" : "application/x-ndjson",
            "User-Agent": `phoneintel-client-ts/${VERSION} node/${process.versions.node}`,
        };
        if (this.#apiKey)
            headers.Authorization = `Bearer ${this.#apiKey}`;
        const path = BULK_JOB_RESULTS_PATH.replace("{job_id}", encodeURIComponent(jobId));
        let response;
        try {
            response = await this.#fetch(this.baseUrl + path + query, {
                headers,
                ...(signal ? { signal } : {}),
            });
        }
        catch (caught) {
            if (signal?.aborted)
                throw signal.reason;
            throw new APIConnectionError(`GET ${path}: ${describe(caught)}`, { cause: caught });
        }
        if (response.status !== 200 || response.body === null) {
            throw errorFrom(response.status, parseJson(await response.text()), response.headers);
        }
        const decoder = new TextDecoder();
        let rest = "";
        for await (const bytes of response.body) {
            rest += decoder.decode(bytes, { stream: true });
            const lines = rest.split("\n");
            rest = lines.pop() ?? "";
            yield* lines;
        }
        rest += decoder.decode();
        if (rest)
            yield rest;
    }
    /** The key, its quota, this month's usage (by product) and its rate limit. Free. */
    account(options = {}) {
        return this.#call({ method: "GET", path: ACCOUNT_PATH, ...options }, (data) => data);
    }
    /**
     * Every event of the key's mode, newest first: `for await (const event of client.events())`.
     * Pages (`limit` each) are asked for as the loop reaches them. Free.
     */
    async *events(options = {}) {
        let startingAfter;
        for (;;) {
            const page = (await this.eventsPage(startingAfter ? { ...options, startingAfter } : options))
                .data;
            yield* page.items;
            const last = page.items.at(-1);
            if (!page.hasMore || last === undefined)
                return;
            startingAfter = last.id;
        }
    }
    /** One page of the key's events (`events()` pages for you). Free. */
    eventsPage(options = {}) {
        const { type, limit, startingAfter, ...request } = options;
        const query = new URLSearchParams();
        if (type !== undefined)
            query.set("type", type);
        if (limit !== undefined)
            query.set("limit", String(limit));
        if (startingAfter !== undefined)
            query.set("startingAfter", startingAfter);
        const path = query.toString() ? `${EVENTS_PATH}?${query}` : EVENTS_PATH;
        return this.#call({ method: "GET", path, ...request }, (data) => data);
    }
    /** The product manifest: every product, its availability, channels, price and endpoint. Public. */
    products(options = {}) {
        return this.#call({ method: "GET", path: PRODUCTS_PATH, ...options }, (data) => data);
    }
    /** The numbers a test key answers, each with the product it is for and what it answers. Public. */
    testNumbers(options = {}) {
        return this.#call({ method: "GET", path: TEST_NUMBERS_PATH, ...options }, (data) => data);
    }
    #lookupCall(call, idempotencyKey, read) {
        // Made once here, before the first attempt: every retry of this call sends the same key.
        return this.#call({ ...call, idempotencyKey: idempotencyKey ?? crypto.randomUUID() }, read);
    }
    async #call(call, read) {
        const answer = await this.#execute(call);
        const requestId = answer.headers.get("X-Request-Id") ?? "";
        const body = answer.body;
        if (!isObject(body) || !("data" in body)) {
            throw new APIError({
                status: answer.status,
                code: "unexpected_response",
                message: "The answer does not have the contract's envelope.",
                requestId: requestId || null,
                headers: answer.headers,
            });
        }
        const meta = (isObject(body.meta) ? body.meta : { requestId });
        return {
            data: read(body.data),
            meta,
            requestId: (isObject(body.meta) && typeof body.meta.requestId === "string" && body.meta.requestId) ||
                requestId,
            status: answer.status,
            replayed: answer.headers.get("Idempotent-Replayed")?.toLowerCase() === "true",
            rateLimit: parseRateLimit(answer.headers),
        };
    }
    async #execute(call) {
        for (let retry = 1;; retry++) {
            let failure;
            try {
                const answer = await this.#send(call);
                this.rateLimit = parseRateLimit(answer.headers) ?? this.rateLimit;
                if (answer.status < 400 && isObject(answer.body))
                    return answer;
                failure = errorFrom(answer.status < 400 ? 502 : answer.status, answer.body, answer.headers);
            }
            catch (caught) {
                // Only a failure with no answer is retried; the caller's abort is thrown as it is.
                if (!(caught instanceof APIConnectionError))
                    throw caught;
                failure = caught;
            }
            const retryable = failure instanceof APIError ? retryableError(failure) : true;
            if (!retryable || retry > this.maxRetries)
                throw failure;
            const delay = this.retryDelay(retry, failure instanceof APIError ? failure.retryAfter : null);
            this.#onRetry?.({ retry, delay, method: call.method, path: call.path, error: failure });
            await sleep(delay, call.signal);
        }
    }
    /**
     * Milliseconds before retry number `retry`: `Retry-After` (seconds) when the server gave
     * one, else 0.5 s doubling each time; capped at `maxRetryWait`, then up to 25 % added so
     * that clients told the same wait do not all come back at the same instant.
     */
    retryDelay(retry, retryAfter) {
        const wanted = retryAfter !== null ? retryAfter * 1000 : BACKOFF_BASE * 2 ** (retry - 1);
        return Math.min(wanted, this.maxRetryWait) * (1 + Math.random() * JITTER);
    }
    async #send(call) {
        const { signal } = call;
        signal?.throwIfAborted();
        const timeout = call.timeout ?? this.timeout;
        const controller = new AbortController();
        let timedOut = false;
        const timer = setTimeout(() => {
            timedOut = true;
            controller.abort();
        }, timeout);
        const forward = () => controller.abort(signal?.reason);
        signal?.addEventListener("abort", forward, { once: true });
        const headers = {
            Accept: "application/json",
            "User-Agent": `phoneintel-client-ts/${VERSION} node/${process.versions.node}`,
        };
        if (this.#apiKey)
            headers.Authorization = `Bearer ${this.#apiKey}`;
        if (call.idempotencyKey)
            headers["Idempotency-Key"] = call.idempotencyKey;
        if (call.body !== undefined)
            headers["Content-Type"] = "application/json";
        if (call.raw !== undefined)
            headers["Content-Type"] = call.raw.contentType;
        const body = call.raw !== undefined ? call.raw.content : JSON.stringify(call.body);
        try {
            const response = await this.#fetch(this.baseUrl + call.path, {
                method: call.method,
                headers,
                ...(call.body !== undefined || call.raw !== undefined ? { body } : {}),
                signal: controller.signal,
            });
            // Read whole inside the timeout: an answer cut off half-way is no answer.
            const text = await response.text();
            return { status: response.status, headers: response.headers, body: parseJson(text) };
        }
        catch (caught) {
            if (signal?.aborted)
                throw signal.reason;
            const where = `${call.method} ${call.path}`;
            if (timedOut) {
                throw new APITimeoutError(`${where}: no answer within ${timeout} ms`, { cause: caught });
            }
            throw new APIConnectionError(`${where}: ${describe(caught)}`, { cause: caught });
        }
        finally {
            clearTimeout(timer);
            signal?.removeEventListener("abort", forward);
        }
    }
}
/** Retried: 503, 429 but `quota_exceeded`, and 409 `idempotency_in_progress`. */
export function retryableError(error) {
    if (error.status === 503)
        return true;
    // A spent quota comes back next month: waiting inside a call cannot help.
    if (error.status === 429)
        return error.code !== "quota_exceeded";
    // The first attempt of this very request is still running (its answer was lost on the
    // way): once it completes, the retry gets its answer.
    return error.status === 409 && error.code === "idempotency_in_progress";
}
/** `RateLimit-Policy: "default";q=600;w=60` and `RateLimit: "default";r=599;t=42`. */
export function parseRateLimit(headers) {
    const policy = structuredItem(headers.get("RateLimit-Policy"));
    const state = structuredItem(headers.get("RateLimit"));
    if (policy === null && state === null)
        return null;
    return {
        policy: (policy ?? state)?.name ?? "",
        limit: policy?.params.q ?? null,
        windowSeconds: policy?.params.w ?? null,
        remaining: state?.params.r ?? null,
        resetSeconds: state?.params.t ?? null,
    };
}
function structuredItem(value) {
    if (!value)
        return null;
    const [name = "", ...parts] = (value.split(",")[0] ?? "").split(";").map((part) => part.trim());
    const params = {};
    for (const part of parts) {
        const [key, number] = part.split("=");
        if (key && number && /^-?\d+$/.test(number))
            params[key.trim()] = Number(number);
    }
    return { name: name.replace(/^"|"$/g, ""), params };
}
function jobPath(jobId) {
    return BULK_JOB_PATH.replace("{job_id}", encodeURIComponent(jobId));
}
function lookupInput(input) {
    if (typeof input === "string")
        return { phone: input };
    return input.country ? { phone: input.phone, country: input.country } : { phone: input.phone };
}
function withFound(data) {
    // phone-exposure's found result is the bare {atRisk}: the contract says nothing else.
    return isObject(data) && !("found" in data) ? { ...data, found: true } : data;
}
function sleep(ms, signal) {
    return new Promise((resolve, reject) => {
        if (signal?.aborted)
            return reject(signal.reason);
        const done = () => {
            signal?.removeEventListener("abort", abort);
            resolve();
        };
        const timer = setTimeout(done, ms);
        const abort = () => {
            clearTimeout(timer);
            reject(signal?.reason);
        };
        signal?.addEventListener("abort", abort, { once: true });
    });
}
function parseJson(text) {
    try {
        return JSON.parse(text);
    }
    catch {
        return null;
    }
}
function describe(error) {
    if (!(error instanceof Error))
        return String(error);
    // fetch says "fetch failed"; the reason (ECONNREFUSED, a reset) is in its cause.
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : "";
    return `${error.name}: ${error.message}${cause}`;
}
function isObject(value) {
    return typeof value === "object" && value !== null && !Array.isArray(value);
}
