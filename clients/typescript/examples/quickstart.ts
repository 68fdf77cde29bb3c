import { Client, QuotaExceededError } from "@phoneintel/client";

const client = new Client(); // PHONEINTEL_API_KEY; PHONEINTEL_BASE_URL (default localhost:8000)
try {
  const { data, meta, requestId } = await client.phoneRisk("+14155550123"); // retried on 429/503, charged once
  if (data.found) console.log(data.risk.level, data.risk.reasons, meta.usage.unitsRemaining);
  else console.log("no result for", data.phoneNumber, "(charged 1 unit)", requestId);
} catch (error) {
  if (error instanceof QuotaExceededError) console.log("quota spent:", error.message);
  else throw error;
}
