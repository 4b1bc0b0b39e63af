// The DKIM key of the seeded `example.test` of an in-memory server (`svc-mail/testing`'s startSandbox, `svc serve --memory`),
// the same in every one: finding a 2048-bit RSA key took most of a sandbox's first start (bench/README.md,
// bench:sandbox-start), and a test run starts sandboxes by the dozen, each in a fresh worker. It is published here on
// purpose and signs for nothing anyone could receive: `example.test` is a reserved name (RFC 2606, RFC 6761) that
// resolves only in a sandbox's own zone, and an in-memory sandbox lives and dies in one process. Every other domain —
// the seeded one of a data directory included — gets a key of its own.
export const IN_MEMORY_SEED_DKIM_KEY = `-----BEGIN PRIVATE KEY-----
MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQCFLIRg48VUkfSQ
WKYh/GOVNCrh3snIkjqp4e27uNS9Lst6ki10p313cEzAZdWRcYzf7EmMuCRkNf18
11YEvCbXve6JJtKGxQdGAuaxALL31ZQ8zOeTda8PwoHFLt7i0cgWWU5Odh0qm+ps
M9JKPZVppkH2ysSY7Q43N5UVlI5RzZR4JD5mLTfxGhwhoZsarw03PXDES3RwW5JW
8/zrxjlCJtrVbXUnoG4VQfA0lMiT7NfkLg2QUNsexH/5BSPAHn9w2pKnvCS9nr4N
kMecw1Bz0QWFb8FdDT1CNF8f0Y5OmOaTw0qXApOmFCtF99kee5HQ37TMRT4cVXMP
HLrJfMpRAgMBAAECggEAKxDp4FFYK5Clp5ZbZ0swwvvjUDbVRzzupqhu0lGjzmgX
GlSySXKuktTopSFpbsbrOTC22kBkWFnTVy9l3FMiNotv27+HvlhyETR3+M6Ska3q
ab0TuG6KxcxvXd5Z6rzPeVa5CYuNxA02wnYBr8t5iXhgBZit+gxTGA0r85YebhpX
WB04ucdfW/pTGuRCjL3dTuDV6k6bKMSEe6MiuyJTKG7jTf7hSi1IDfrHBjEyTVmw
z5BfmWNcjmu+4bY3pYNWAiD70YVaaK6V+Ore4MZsyS3RM/zy10jXHeB0bVkQ6DMp
d37C3Hyl6dKs+AGOs1/6Vjktr663p8IyjdTwImP8twKBgQC5s+IpoJf09eeqWBD9
X/hWYbbev+r+v4BBe0ImqA4yuLp8VXKC3XGMmRqJYPwpIEog8QHslkIBJjfOnc2k
8Si1/zYm4t9n0PJlDXsgNYUEmYqsUC16AhyRwmHoHuLT0NMf+IGso0RQqTgUp9zD
TpuBlUhK32zdImTdvJHvLU0QdwKBgQC3linHn0K8LGSv0sn7GGad2Gq5bgJI68Cs
FZOfXIXTteeB5jv6Ls4IgOvSMt42B7bcWyRDZ8L1attyA32WIvcGVeDdpTZ2g7q7
alW8hZ/2NDicHfAvR1PPmfFGcRNfpYrbjMO8UPCiDqa5nip3LVFNmT26G8GAuH8g
OHOE6aq1dwKBgDoooSMiXZTlUrmhvShtXwxGrAwVFRbViOh5Ht2WcmPmQNlhtWxQ
yBgddxchXbfPmge5Ez4yTNepTX8TIu2ObY6aMC57jTYpVVDaqP4MZO1s3OZccfGt
KZ9ovlsBGU73Lrfrj0kvFN0iMiMd82DjhIZP54UzdhfHhsl/HkFG8cS/AoGBAJHM
KKwHOAmXO/NCdPP74erzZ3aR/jCJQf+oNw+1e/axnQTVosZCi4/HSwEpMr44DCoe
G8OIURV0Yoi+autkI0gdxbJgtcsTPKYAgcxxVqNBv7+EKy5w+AeEG1A1Fwy7vHY1
6XDR2vjop9H74X+6Nrpou9PknR0r6JHfIyboJ5FrAoGARFSgF2aDd6pP0I6L9pLE
RsmTSeOecZjEwCB6fvjdkyeH+rWHkOwtDzX3n6VfKJqe8ywJZkdxmS5dt8Gjm/IV
/Lv2BzIN0P5VotUaqe1kMKdFsByl8R7NIlK6bNXa2NDYMzWFc7QZrT11tKS0MgCf
Z7z82QnCe7DYKE2sK0SIi6s=
-----END PRIVATE KEY-----
`;
