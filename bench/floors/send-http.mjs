// The send of bench:cli-start in one file with Node's http module (what svc's client speaks), printing the id: the
// least a one-request command can cost on this Node.
import { request } from 'node:http';

const [from, to, subject, text] = process.argv.slice(2);
const body = JSON.stringify({ from, to: [to], subject, text });
const req = request(`${process.env.SVC_BASE_URL}/emails`, {
  method: 'POST',
  headers: {
    authorization: `Bearer ${process.env.SVC_API_KEY}`,
    'service-version': '2026-08-01',
    'content-type': 'application/json',
    'idempotency-key': crypto.randomUUID(),
  },
});
req.on('response', async (res) => {
  let text = '';
  for await (const chunk of res) text += chunk;
  const answer = JSON.parse(text);
  if (res.statusCode !== 202) throw new Error(`${res.statusCode} ${text}`);
  console.log(`${answer.id}\t${answer.status}`);
});
req.end(body);
