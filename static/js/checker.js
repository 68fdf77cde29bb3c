/* The browser checker of templates/checkers/checker.html.
 *
 * For each check: a fresh ECDH P-256 key pair made with WebCrypto (the private key cannot be
 * exported), a small hashcash proof of work, then one POST to the checker route. A result
 * comes back only as a compact JWE (alg ECDH-ES, enc A256GCM) encrypted to this page's key;
 * errors are plain JSON {"error": {"code", "message", "details"?}}. The envelope format is
 * documented in lookups/browser/envelope.py, the protection layer in protection.py.
 */
"use strict";

(function () {
  const form = document.querySelector("form[data-checker]");
  if (!form) {
    return;
  }
  const subtle = window.crypto && window.crypto.subtle;
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  const product = form.dataset.product;
  const checkUrl = form.dataset.checkUrl;
  const token = form.dataset.checkerToken;
  const powBits = Number(form.dataset.powBits);
  const button = form.querySelector("button[type=submit]");
  const status = form.querySelector(".checker-status");
  const alertBox = document.querySelector(".checker-error");
  const resultBox = document.querySelector(".checker-result");
  const facts = resultBox.querySelector(".checker-facts");
  const json = resultBox.querySelector(".checker-json");

  const NUMBER_TYPES = {
    mobile: "Mobile",
    fixed_line: "Fixed line",
    fixed_line_or_mobile: "Fixed line or mobile",
    toll_free: "Toll free",
    premium_rate: "Premium rate",
    shared_cost: "Shared cost",
    voip: "VoIP",
    personal_number: "Personal number",
    pager: "Pager",
    uan: "Universal access number",
    voicemail: "Voicemail",
    unknown: "Unknown",
  };
  // risk.reasons in words, from lookups/risk.py REASON_LABELS (the page embeds them).
  const RISK_REASONS = JSON.parse(document.getElementById("checker-risk-reasons").textContent);
  const NOT_FOUND = {
    "reverse-phone-lookup": "No verified business is registered to this number.",
    "phone-exposure": "The exposure data does not cover this number's country.",
  };
  const RELOAD_CODES = new Set([
    "checker_token_expired",
    "checker_token_invalid",
    "checker_session_required",
    "csrf_failed",
  ]);

  // --- bytes and base64url ---------------------------------------------------------------

  function fromBase64url(text) {
    const base64 = text.replace(/-/g, "+").replace(/_/g, "/");
    const binary = atob(base64.padEnd(Math.ceil(base64.length / 4) * 4, "="));
    return Uint8Array.from(binary, (c) => c.charCodeAt(0));
  }

  function uint32(value) {
    const bytes = new Uint8Array(4);
    new DataView(bytes.buffer).setUint32(0, value);
    return bytes;
  }

  function concat(...parts) {
    const out = new Uint8Array(parts.reduce((total, part) => total + part.length, 0));
    let offset = 0;
    for (const part of parts) {
      out.set(part, offset);
      offset += part.length;
    }
    return out;
  }

  // --- proof of work: hashcash over SHA-256 -----------------------------------------------

  function leadingZeroBits(bytes) {
    let bits = 0;
    for (const byte of bytes) {
      if (byte === 0) {
        bits += 8;
        continue;
      }
      return bits + Math.clz32(byte) - 24;
    }
    return bits;
  }

  // The first decimal nonce with SHA-256("<token>.<x>.<y>.<nonce>") starting with `bits` zero
  // bits. Digests run in batches: WebCrypto is asynchronous, and one at a time is slow.
  async function solveProofOfWork(prefix, bits) {
    const batch = 256;
    for (let start = 0; ; start += batch) {
      const nonces = Array.from({ length: batch }, (_, i) => String(start + i));
      const digests = await Promise.all(
        nonces.map((nonce) => subtle.digest("SHA-256", encoder.encode(prefix + nonce)))
      );
      const index = digests.findIndex((d) => leadingZeroBits(new Uint8Array(d)) >= bits);
      if (index !== -1) {
        return nonces[index];
      }
    }
  }

  async function prepareCheck() {
    if (!subtle) {
      throw new Error("no-webcrypto");
    }
    const keyPair = await subtle.generateKey({ name: "ECDH", namedCurve: "P-256" }, false, [
      "deriveBits",
    ]);
    const { kty, crv, x, y } = await subtle.exportKey("jwk", keyPair.publicKey);
    const proofOfWork = await solveProofOfWork(`${token}.${x}.${y}.`, powBits);
    return { privateKey: keyPair.privateKey, publicKey: { kty, crv, x, y }, proofOfWork };
  }

  // --- the envelope: compact JWE, ECDH-ES + A256GCM ---------------------------------------

  // RFC 7518 §4.6.2: Concat KDF with SHA-256; one round yields the 256-bit key. No apu/apv.
  async function concatKdf(sharedSecret, enc, keyBits) {
    const otherInfo = concat(
      uint32(enc.length),
      encoder.encode(enc),
      uint32(0),
      uint32(0),
      uint32(keyBits)
    );
    const input = concat(uint32(1), new Uint8Array(sharedSecret), otherInfo);
    return new Uint8Array(await subtle.digest("SHA-256", input));
  }

  async function openEnvelope(compact, privateKey) {
    const parts = compact.split(".");
    if (parts.length !== 5 || parts[1] !== "") {
      throw new Error("not-a-jwe");
    }
    const [protectedPart, , ivPart, ciphertextPart, tagPart] = parts;
    const header = JSON.parse(decoder.decode(fromBase64url(protectedPart)));
    if (header.alg !== "ECDH-ES" || header.enc !== "A256GCM" || !header.epk) {
      throw new Error("unexpected-jwe-header");
    }
    const serverKey = await subtle.importKey(
      "jwk",
      { kty: "EC", crv: "P-256", x: header.epk.x, y: header.epk.y },
      { name: "ECDH", namedCurve: "P-256" },
      false,
      []
    );
    const shared = await subtle.deriveBits({ name: "ECDH", public: serverKey }, privateKey, 256);
    const contentKey = await subtle.importKey(
      "raw",
      await concatKdf(shared, header.enc, 256),
      { name: "AES-GCM" },
      false,
      ["decrypt"]
    );
    const plaintext = await subtle.decrypt(
      {
        name: "AES-GCM",
        iv: fromBase64url(ivPart),
        additionalData: encoder.encode(protectedPart),
        tagLength: 128,
      },
      contentKey,
      concat(fromBase64url(ciphertextPart), fromBase64url(tagPart))
    );
    return JSON.parse(decoder.decode(plaintext));
  }

  // --- showing results and errors ---------------------------------------------------------

  function resultFacts(phoneNumber, result) {
    const rows = [["Number", phoneNumber]];
    if (product === "phone-exposure" && "atRisk" in result) {
      rows.push([
        "In exposure data",
        result.atRisk
          ? "Yes: this number appears in known exposure data."
          : "No: this number does not appear in known exposure data.",
      ]);
      return rows;
    }
    if (!result.found) {
      rows.push([
        "Result",
        NOT_FOUND[product] || "Not found: this number is in a range that is not in service.",
      ]);
      return rows;
    }
    if (result.risk) {
      const level = result.risk.level[0].toUpperCase() + result.risk.level.slice(1);
      rows.push(["Risk", `${level} (${result.risk.score} of 100)`]);
      const reasons = result.risk.reasons.map((code) => RISK_REASONS[code] || code);
      rows.push(["Why", reasons.length ? reasons : "Nothing raised the score."]);
    }
    if ("reportCount" in result) {
      rows.push(["Reports on record", String(result.reportCount)]);
    }
    if (result.carrier) {
      rows.push(["Operator", result.carrier.operatorName || "Not known"]);
      rows.push(["Number type", NUMBER_TYPES[result.carrier.numberType] || "Unknown"]);
      rows.push(["Country", result.carrier.country || "Not known"]);
    }
    if (result.business) {
      rows.push(["Business", result.business.name]);
      rows.push(["Verified", result.business.verified ? "Yes" : "No"]);
    }
    return rows;
  }

  function showResult(phoneNumber, result) {
    facts.replaceChildren();
    for (const [term, value] of resultFacts(phoneNumber, result)) {
      const dt = document.createElement("dt");
      dt.textContent = term;
      const dd = document.createElement("dd");
      if (Array.isArray(value)) {
        const list = document.createElement("ul");
        for (const item of value) {
          const li = document.createElement("li");
          li.textContent = item;
          list.append(li);
        }
        dd.append(list);
      } else {
        dd.textContent = value;
      }
      facts.append(dt, dd);
    }
    json.textContent = JSON.stringify(result, null, 2);
    resultBox.hidden = false;
  }

  function clearMessages() {
    alertBox.hidden = true;
    alertBox.replaceChildren();
    resultBox.hidden = true;
    for (const field of form.querySelectorAll("[data-field]")) {
      const error = field.querySelector(".error");
      error.hidden = true;
      error.textContent = "";
      field.classList.remove("field-error");
      field.querySelector("input").removeAttribute("aria-invalid");
    }
  }

  function showAlert(message, withReload) {
    alertBox.textContent = message;
    if (withReload) {
      const link = document.createElement("a");
      link.href = window.location.pathname;
      link.textContent = "Reload the page";
      alertBox.append(" ", link);
    }
    alertBox.hidden = false;
  }

  function waitText(seconds) {
    if (seconds < 120) {
      return `${seconds} seconds`;
    }
    if (seconds < 7200) {
      return `${Math.ceil(seconds / 60)} minutes`;
    }
    return `${Math.ceil(seconds / 3600)} hours`;
  }

  function showError(error, response) {
    const unplaced = [];
    for (const detail of error.details || []) {
      const field = form.querySelector(`[data-field="${CSS.escape(detail.field)}"]`);
      if (!field) {
        unplaced.push(detail.message);
        continue;
      }
      const slot = field.querySelector(".error");
      slot.textContent = detail.message;
      slot.hidden = false;
      field.classList.add("field-error");
      field.querySelector("input").setAttribute("aria-invalid", "true");
    }
    if (error.details && error.details.length && !unplaced.length) {
      form.querySelector("[aria-invalid=true]").focus();
      return;
    }
    if (error.code === "rate_limited") {
      const wait = Number(response.headers.get("Retry-After")) || 60;
      showAlert(`You have checked many numbers in a short time. Try again in ${waitText(wait)}.`);
    } else if (error.code === "checker_token_expired") {
      showAlert("This page has been open too long, so it can no longer check numbers.", true);
    } else if (RELOAD_CODES.has(error.code)) {
      showAlert("This page's checker session has ended (cookies cleared, perhaps).", true);
    } else {
      showAlert(unplaced.length ? unplaced.join(" ") : error.message);
    }
  }

  // --- the check ----------------------------------------------------------------------------

  let prepared = prepareCheck();
  prepared.catch(() => {}); // reported when the check awaits it

  async function runCheck() {
    const check = await prepared;
    const country = form.elements.country.value.trim();
    const body = {
      phone: form.elements.phone.value,
      checkerToken: token,
      proofOfWork: check.proofOfWork,
      publicKey: check.publicKey,
    };
    if (country) {
      body.country = country;
    }
    const response = await fetch(checkUrl, {
      method: "POST",
      credentials: "same-origin",
      cache: "no-store",
      headers: {
        "Content-Type": "application/json",
        "X-CSRFToken": form.elements.csrfmiddlewaretoken.value,
      },
      body: JSON.stringify(body),
    });
    if (response.ok) {
      const opened = await openEnvelope(await response.text(), check.privateKey);
      if (opened.product !== product) {
        throw new Error("wrong-product");
      }
      showResult(opened.phoneNumber, opened.result);
      return;
    }
    let error;
    try {
      error = (await response.json()).error;
    } catch (_) {
      error = { code: "server_error", message: "The checker failed to answer. Try again." };
    }
    showError(error, response);
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearMessages();
    button.disabled = true;
    status.textContent = "Checking…";
    try {
      await runCheck();
    } catch (failure) {
      showAlert(
        failure.message === "no-webcrypto"
          ? "This browser cannot run the checker: it needs WebCrypto over HTTPS."
          : "The check could not be completed. Try again."
      );
    } finally {
      // Each check spends its key pair and proof of work; the next one is prepared now.
      prepared = prepareCheck();
      prepared.catch(() => {});
      button.disabled = false;
      status.textContent = "";
    }
  });
})();
