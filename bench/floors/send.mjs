// The floor of `svc emails send` in bench:cli-start: the same request in one file with Node's fetch, printing the id.
const [from, to, subject, text] = process.argv.slice(2);
const res = await fetch(`${process.env.SVC_BASE_URL}/emails`, {
  method: 'POST',
  headers: {
    authorization: `Bearer ${process.env.SVC_API_KEY}`,
    'service-version': '2026-08-01',
    'content-type': 'application/json',
    'idempotency-key': crypto.randomUUID(),
  },
  body: JSON.stringify({ from, to: [to], subject, text }),
});
const body = await res.json();
if (res.status !== 202) throw new Error(`${res.status} ${JSON.stringify(body)}`);
console.log(`${body.id}\t${body.status}`);
