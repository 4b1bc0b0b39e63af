// The floor of `svc events list` in bench:cli-start: the same request in one file with Node's fetch, printing the ids.
const res = await fetch(`${process.env.SVC_BASE_URL}/events`, {
  headers: { authorization: `Bearer ${process.env.SVC_API_KEY}`, 'service-version': '2026-08-01' },
});
const body = await res.json();
if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(body)}`);
for (const e of body.data) console.log(e.id);
