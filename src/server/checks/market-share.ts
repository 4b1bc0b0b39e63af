// Email clients' shares of opened mail, which the HTML compatibility score weighs clients by: Litmus's Email Client
// Market Share of May 2021, the last figures caniemail.com published beside its support tables (its
// data/emailclientmarketshare.yml, with the clients each figure covers; it has shown an unweighted share of the
// clients tested since). A figure that covers several clients is shared equally among them; Apple's iPad is counted
// with iOS's Apple Mail (caniemail tests them as one), and Google's Android app, which caniemail does not test, is left
// out, as caniemail left it out.

export const MARKET_SHARE_SOURCE = "Litmus's Email Client Market Share, May 2021, as caniemail.com published it";

const FIGURES: { share: number; clients: string[] }[] = [
  { share: 44.93 + 1.48, clients: ['apple-mail.ios'] },
  { share: 17.77, clients: ['gmail.desktop-webmail', 'gmail.ios', 'gmail.android'] },
  { share: 12.37, clients: ['apple-mail.macos'] },
  { share: 8.62, clients: ['outlook.windows', 'outlook.macos'] },
  {
    share: 5.47,
    clients: ['yahoo.desktop-webmail', 'yahoo.ios', 'yahoo.android', 'aol.desktop-webmail', 'aol.ios', 'aol.android'],
  },
  { share: 1.17, clients: ['outlook.outlook-com'] },
  { share: 0.98, clients: ['samsung-email.android'] },
];

/** Each client's share in percent (`family.platform` → share); a client not named has none published. */
export const MARKET_SHARE: ReadonlyMap<string, number> = new Map(
  FIGURES.flatMap((f) => f.clients.map((c) => [c, Math.round((f.share / f.clients.length) * 100) / 100] as const)),
);
