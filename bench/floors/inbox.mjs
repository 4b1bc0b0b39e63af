// The floor of `svc inbox` in bench:cli-start: the same request in one file with Node's fetch, printing the ids.
const res = await fetch(`${process.env.SVC_BASE_URL.replace(/\/v1$/, '')}/sandbox/messages`, {
  headers: { authorization: `Bearer ${process.env.SVC_ADMIN_TOKEN}`, 'service-version': '2026-08-01' },
});
const body = await res.json();
if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(body)}`);
for (const m of body.data) console.log(m.id);
