// Written as a user of the package would: installed with `npm install ./clients/typescript`
// into a project of its own, configured by the environment only. Prints one JSON line.
import { Client, InvalidPhoneError } from "@phoneintel/client";

const client = new Client();
const { data, meta, requestId } = await client.phoneLookup("+14155550123");
if (!data.found) throw new Error(`expected a result for ${data.phoneNumber}`);

let invalid = null;
try {
  await client.phoneLookup("12345");
} catch (error) {
  if (!(error instanceof InvalidPhoneError)) throw error;
  invalid = error.code;
}

console.log(
  JSON.stringify({ level: data.risk.level, unitsCharged: meta.unitsCharged, requestId, invalid }),
);
