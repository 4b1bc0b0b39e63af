// Transactional mail written the way well-known services write theirs (sign-in codes, password resets, invitations,
// magic links, receipts, deliveries), in our own words: text only, HTML only, or both, with their headers' logos,
// "view in browser" links, footers with addresses, phone numbers and unsubscribe links. Each says the code and the
// link a person would use. lib/extract.test.ts reads them as written; test/e2e/extract-corpus.test.ts sends them through
// a real server's /v1 (click tracking on unless `clicks: false`) and reads them back with every client.

export interface CorpusMail {
  name: string;
  subject: string;
  text?: string;
  html?: string;
  /** Click tracking of the send (default on, as the API's default). */
  clicks?: boolean;
  /** The code a person would type; null when the mail has none (nothing may be taken for one). */
  code: string | null;
  /** The real target of the link a person would click; undefined where the mail is not for a link (a code's). */
  link?: string | null;
}

/** The frame most services put around their mail: a hidden preheader, a logo, the content, a footer. */
function frame(o: { preheader: string; logo: string; body: string; footer: string; brand?: string }): string {
  return `<!DOCTYPE html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>${o.brand ?? 'Mail'}</title><style>body{margin:0;padding:0}.btn a{display:inline-block;padding:12px 24px}
@media (max-width:600px){.container{width:100%!important}}</style></head>
<body style="background:#f6f8fa">
<div style="display:none;max-height:0;overflow:hidden">${o.preheader}&nbsp;&zwnj;&nbsp;&zwnj;</div>
<table role="presentation" width="100%" cellpadding="0" cellspacing="0"><tr><td align="center">
<table class="container" role="presentation" width="600" cellpadding="0" cellspacing="0" style="background:#fff">
<tr><td style="padding:24px"><a href="${o.logo}"><img src="${o.logo}logo.png" width="120" alt="${o.brand ?? ''}"></a></td></tr>
<tr><td style="padding:0 24px 24px;font-family:Helvetica,Arial,sans-serif;font-size:16px;line-height:24px">${o.body}</td></tr>
<tr><td style="padding:24px;font-size:12px;color:#6a737d">${o.footer}</td></tr>
</table></td></tr></table></body></html>`;
}

/** A "bulletproof" button: VML for Outlook in a conditional comment, an `<a>` for everyone else. */
function button(href: string, label: string): string {
  const attr = href.replace(/&/g, '&amp;');
  return `<!--[if mso]><v:roundrect xmlns:v="urn:schemas-microsoft-com:vml" href="${attr}" style="height:44px;width:220px" arcsize="10%" fillcolor="#2da44e"><center>${label}</center></v:roundrect><![endif]-->
<!--[if !mso]><!--><table role="presentation" class="btn"><tr><td style="background:#2da44e;border-radius:6px"><a href="${attr}" target="_blank" style="color:#fff;text-decoration:none;font-weight:600">${label}</a></td></tr></table><!--<![endif]-->`;
}

export const CORPUS: CorpusMail[] = [
  {
    name: 'github-verify-email',
    subject: '[GitHub] Please verify your email address.',
    text: `Hey ada-lovelace!

To complete your sign up, please verify your email address:

https://github.com/users/ada-lovelace/emails/90211/confirm_verification/7f3c9a21e8?via_launch_code_email=true

Once verified, you can start using all of GitHub's features to explore, build, and share projects.

Button not working? Paste the following link into your browser:
https://github.com/users/ada-lovelace/emails/90211/confirm_verification/7f3c9a21e8?via_launch_code_email=true

You're receiving this email because you recently created a new GitHub account or added a new email address. If this wasn't you, please ignore this email.

GitHub, Inc. ・88 Colin P Kelly Jr Street ・San Francisco, CA 94107`,
    html: frame({
      brand: 'GitHub',
      preheader:
        'Almost done, @ada-lovelace! To complete your GitHub sign up, we just need to verify your email address.',
      logo: 'https://github.com/',
      body: `<h1 style="font-size:24px">Almost done, <strong>@ada-lovelace</strong>! To complete your GitHub sign up, we just need to verify your email address.</h1>
${button('https://github.com/users/ada-lovelace/emails/90211/confirm_verification/7f3c9a21e8?via_launch_code_email=true', 'Verify email address')}
<p>Once verified, you can start using all of GitHub's features to explore, build, and share projects.</p>
<p>Button not working? Paste the following link into your browser:<br><a href="https://github.com/users/ada-lovelace/emails/90211/confirm_verification/7f3c9a21e8?via_launch_code_email=true">https://github.com/users/ada-lovelace/emails/90211/confirm_verification/7f3c9a21e8?via_launch_code_email=true</a></p>`,
      footer: `You're receiving this email because you recently created a new GitHub account or added a new email address.<br>
<a href="https://github.com/site/terms">Terms</a> ・ <a href="https://github.com/site/privacy">Privacy</a> ・ <a href="https://github.com/login">Sign into GitHub</a><br>
GitHub, Inc. ・88 Colin P Kelly Jr Street ・San Francisco, CA 94107`,
    }),
    code: null,
    link: 'https://github.com/users/ada-lovelace/emails/90211/confirm_verification/7f3c9a21e8?via_launch_code_email=true',
  },
  {
    name: 'github-device-code',
    subject: '[GitHub] Please verify your device',
    text: `Hey ada-lovelace!

A sign in attempt requires further verification because we did not recognize your device. To complete the sign in, enter the verification code on the unrecognized device.

Device: Firefox on Linux
Verification code: 482913

If you did not attempt to sign in to your account, your password may be compromised. Visit https://github.com/settings/security to create a new, strong password for your GitHub account.

If you'd like to automatically verify devices in the future, consider enabling two-factor authentication on your account. Visit https://docs.github.com/articles/configuring-two-factor-authentication to learn about two-factor authentication.

Thanks,
The GitHub Team`,
    code: '482913',
  },
  {
    name: 'stripe-receipt',
    subject: 'Your receipt from Acme Labs #2231-4410',
    html: frame({
      brand: 'Acme Labs',
      preheader: 'Receipt from Acme Labs — $20.00 paid Aug 1, 2026',
      logo: 'https://acme-labs.example/',
      body: `<p style="font-size:20px">Receipt from Acme Labs</p><p style="color:#8898aa">Receipt #2231-4410</p>
<table><tr><td>AMOUNT PAID<br>$20.00</td><td>DATE PAID<br>Aug 1, 2026, 4:12:09 PM</td><td>PAYMENT METHOD<br>Visa – 4242</td></tr></table>
<p>SUMMARY</p><table><tr><td>Pro plan (× 1)</td><td>$20.00</td></tr><tr><td><strong>Amount paid</strong></td><td><strong>$20.00</strong></td></tr></table>
${button('https://pay.stripe.com/receipts/invoices/CAcQARoXChVhY2N0XzFOeA/rcpt_Q8aB/pdf?s=em', 'Download receipt')}
<p>If you have any questions, contact us at <a href="mailto:billing@acme-labs.example">billing@acme-labs.example</a> or call us at <a href="tel:+15550100199">+1 555-010-0199</a>.</p>`,
      footer: `Something wrong with the email? <a href="https://dashboard.stripe.com/receipts/invoices/CAcQARoXChVhY2N0XzFOeA?s=em">View it in your browser</a>.<br>
You're receiving this email because you made a purchase at Acme Labs, which partners with <a href="https://stripe.com/">Stripe</a> to provide invoicing and payment processing.<br>
Stripe, 354 Oyster Point Blvd, South San Francisco, CA 94080`,
    }),
    code: null,
    link: 'https://pay.stripe.com/receipts/invoices/CAcQARoXChVhY2N0XzFOeA/rcpt_Q8aB/pdf?s=em',
  },
  {
    name: 'slack-confirmation-code',
    subject: 'Slack confirmation code: 551-209',
    text: `Confirm your email address

Your confirmation code is below — enter it in your open browser window and we'll help you get signed in.

551-209

If you didn't request this email, there's nothing to worry about — you can safely ignore it.

Our Blog (https://slack.com/blog) | Policies (https://slack.com/legal) | Help Center (https://slack.com/help)

Salesforce Tower, 415 Mission Street, 3rd floor, San Francisco, CA 94105`,
    html: frame({
      brand: 'Slack',
      preheader: 'Your confirmation code is 551-209',
      logo: 'https://slack.com/',
      body: `<h1>Confirm your email address</h1><p>Your confirmation code is below — enter it in your open browser window and we'll help you get signed in.</p>
<div style="background:#f5f4f5;font-size:30px;padding:24px;text-align:center;letter-spacing:4px">551-209</div>
<p>If you didn't request this email, there's nothing to worry about — you can safely ignore it.</p>`,
      footer: `<a href="https://slack.com/blog">Our Blog</a> | <a href="https://slack.com/legal">Policies</a> | <a href="https://slack.com/help">Help Center</a> | <a href="https://slack.com/community">Slack Community</a><br>
©2026 Slack Technologies, LLC, a Salesforce company.<br>Salesforce Tower, 415 Mission Street, 3rd floor, San Francisco, CA 94105`,
    }),
    code: '551209',
  },
  {
    name: 'slack-invitation',
    subject: 'Ada Lovelace has invited you to work with them in Slack',
    html: frame({
      brand: 'Slack',
      preheader: 'Join your team on Slack',
      logo: 'https://slack.com/',
      body: `<h1>Join your team on Slack</h1><p><strong>Ada Lovelace</strong> (ada@analytical.example) has invited you to use Slack with them, in a workspace called <strong>Analytical Engines</strong>.</p>
${button('https://join.slack.com/t/analytical-engines/shared_invite/zt-2k9x1m-Q7pX3vYb8r', 'Join Now')}
<p>Slack is a messaging app for teams, a place you can collaborate on projects and organize conversations — so you can work together, no matter where you are. <a href="https://slack.com/features">Learn more</a></p>`,
      footer: `<a href="https://twitter.com/SlackHQ"><img src="https://slack.com/img/twitter.png" alt="Twitter"></a> <a href="https://www.facebook.com/slackhq"><img src="https://slack.com/img/fb.png" alt="Facebook"></a><br>
Salesforce Tower, 415 Mission Street, 3rd floor, San Francisco, CA 94105`,
    }),
    code: null,
    link: 'https://join.slack.com/t/analytical-engines/shared_invite/zt-2k9x1m-Q7pX3vYb8r',
  },
  {
    name: 'google-recovery-email-code',
    subject: 'Email verification code: 605112',
    html: frame({
      brand: 'Google',
      preheader: 'Use this code to verify your recovery email',
      logo: 'https://www.google.com/',
      body: `<div style="font-size:24px">Verify your recovery email</div>
<div>Google received a request to use <a style="color:#4285f4">ada@example.org</a> as a recovery email for Google Account <a>ada.lovelace@gmail.example</a>.</div>
<div>Use this code to finish setting up this recovery email:</div>
<div style="font-size:36px;line-height:44px;font-weight:700;letter-spacing:6px">605112</div>
<div>This code will expire in 24 hours.</div>
<div>If you don't recognize <a>ada.lovelace@gmail.example</a>, you can safely ignore this email.</div>`,
      footer: `You received this email to let you know about important changes to your Google Account and services.<br>© 2026 Google LLC, 1600 Amphitheatre Parkway, Mountain View, CA 94043, USA`,
    }),
    code: '605112',
  },
  {
    name: 'google-security-alert',
    subject: 'Security alert',
    html: frame({
      brand: 'Google',
      preheader: 'A new sign-in on Linux',
      logo: 'https://www.google.com/',
      body: `<div style="font-size:24px">A new sign-in on Linux</div><div>ada.lovelace@gmail.example</div>
<div>We noticed a new sign-in to your Google Account on a Linux device. If this was you, you don't need to do anything. If not, we'll help you secure your account.</div>
${button('https://accounts.google.com/AccountChooser?Email=ada.lovelace@gmail.example&continue=https://myaccount.google.com/alert/nt/1754050000000?rfn%3D325', 'Check activity')}
<div>You can also see security activity at<br><a href="https://myaccount.google.com/notifications">https://myaccount.google.com/notifications</a></div>`,
      footer: `You received this email to let you know about important changes to your Google Account and services.<br>© 2026 Google LLC, 1600 Amphitheatre Parkway, Mountain View, CA 94043, USA`,
    }),
    code: null,
    link: 'https://accounts.google.com/AccountChooser?Email=ada.lovelace@gmail.example&continue=https://myaccount.google.com/alert/nt/1754050000000?rfn%3D325',
  },
  {
    name: 'microsoft-security-code',
    subject: 'Microsoft account security code',
    text: `Microsoft account

Security code

Please use the following security code for the Microsoft account ad*****@example.org.

Security code: 731902

If you don't recognize the Microsoft account ad*****@example.org, you can click https://account.live.com/dp?euid=0003BFFD8C24A1F2&t=ABcD3 to remove your email address from that account.

Thanks,
The Microsoft account team`,
    code: '731902',
  },
  {
    name: 'microsoft-single-use-code',
    subject: 'Your single-use code',
    clicks: false,
    html: `<html><body style="font-family:'Segoe UI',Tahoma,sans-serif">
<table dir="ltr"><tr><td style="font-size:17px;color:#707070">Microsoft account</td></tr>
<tr><td style="font-size:41px;color:#2672ec">Your single-use code</td></tr>
<tr><td style="padding-top:25px">Hi ad*****@example.org,</td></tr>
<tr><td style="padding-top:25px">We received your request for a single-use code to use with your Microsoft account.</td></tr>
<tr><td style="padding-top:25px">Your single-use code is: <span style="font-weight:bold">8217</span></td></tr>
<tr><td style="padding-top:25px">If you didn't request a code, you can safely ignore this email. Someone else might have typed your email address by mistake.</td></tr>
<tr><td style="padding-top:25px">Thanks,</td></tr><tr><td>The Microsoft account team</td></tr>
<tr><td style="padding-top:25px"><a href="https://privacy.microsoft.com/privacystatement">Privacy Statement</a><br>Microsoft Corporation, One Microsoft Way, Redmond, WA 98052</td></tr>
</table></body></html>`,
    code: '8217',
  },
  {
    name: 'auth0-verify-email',
    subject: 'Verify your email',
    text: `Welcome to Acme!

Thank you for signing up. Please verify your email address by clicking the following link:

Confirm my account ( https://acme.us.auth0.com/u/email-verification?ticket=Zx9QpL3vT0aKfE2#/ )

If you are having any issues with your account, please don't hesitate to contact us by replying to this mail.

Thanks!
Acme`,
    html: `<html><head><style type="text/css">.button{background:#eb5424;color:#fff;padding:10px 20px;text-decoration:none}</style></head><body>
<center><table style="width:100%;max-width:680px"><tr><td align="center"><img src="https://cdn.auth0.example/acme/logo.png" alt="Acme" width="50"></td></tr>
<tr><td><h1>Welcome to Acme!</h1><p>Thank you for signing up. Please verify your email address by clicking the following link:</p>
<p><a class="button" href="https://acme.us.auth0.com/u/email-verification?ticket=Zx9QpL3vT0aKfE2#/">Confirm my account</a></p>
<p>If you are having any issues with your account, please don't hesitate to contact us by replying to this mail.</p><p>Thanks!<br><strong>Acme</strong></p></td></tr></table></center></body></html>`,
    code: null,
    link: 'https://acme.us.auth0.com/u/email-verification?ticket=Zx9QpL3vT0aKfE2#/',
  },
  {
    name: 'auth0-passwordless-code',
    subject: 'Welcome to Acme',
    html: `<html><body><center><table style="width:100%;max-width:680px"><tr><td><img src="https://cdn.auth0.example/acme/logo.png" alt="Acme" width="50"></td></tr>
<tr><td><p>Your verification code is: <b>914027</b></p><p>This code will expire in 5 minutes.</p>
<p>If you are having any issues with your account, please don't hesitate to contact us by replying to this mail.</p><br>Thanks!<br><strong>Acme</strong></td></tr>
<tr><td style="font-size:11px;color:#999">If you did not make this request, please contact us by replying to this mail.</td></tr></table></center></body></html>`,
    code: '914027',
  },
  {
    name: 'auth0-password-reset',
    subject: 'Reset your password',
    text: `Hello,

We've received a request to reset the password for the Acme account associated with ada@example.org. No changes have been made to your account yet.

You can reset your password by clicking the link below:
https://acme.us.auth0.com/lo/reset?ticket=Rk2mP8sQwX1v4#

If you did not request a new password, please let us know immediately by replying to this email.

— The Acme team`,
    html: `<html><body><table style="width:100%;max-width:680px"><tr><td><img src="https://cdn.auth0.example/acme/logo.png" alt="Acme"></td></tr>
<tr><td><p>Hello,</p><p>We've received a request to reset the password for the Acme account associated with ada@example.org. No changes have been made to your account yet.</p>
<p>You can reset your password by clicking the link below:</p><p><a href="https://acme.us.auth0.com/lo/reset?ticket=Rk2mP8sQwX1v4#" style="background:#635dff;color:#fff;padding:12px 20px">Reset your password</a></p>
<p>If you did not request a new password, please let us know immediately by replying to this email.</p><p>— The Acme team</p></td></tr></table></body></html>`,
    code: null,
    link: 'https://acme.us.auth0.com/lo/reset?ticket=Rk2mP8sQwX1v4#',
  },
  {
    name: 'shopify-order-confirmation',
    subject: 'Order #1042 confirmed',
    html: frame({
      brand: 'Byron Goods',
      preheader: "We're getting your order ready to be shipped. We will notify you when it has been sent.",
      logo: 'https://byron-goods.example/',
      body: `<p style="color:#999">ORDER #1042</p><h2>Thank you for your purchase!</h2>
<p>Hi Ada, we're getting your order ready to be shipped. We will notify you when it has been sent.</p>
<table><tr><td class="btn" style="background:#1990c6;border-radius:4px"><a href="https://byron-goods.example/71234560/orders/4f2c9e0b1a7d/authenticate?key=8c1f2e">View your order</a></td><td>or <a href="https://byron-goods.example/">Visit our store</a></td></tr></table>
<h3>Order summary</h3><table><tr><td>Linen notebook × 2</td><td>$48.00</td></tr><tr><td>Subtotal</td><td>$48.00</td></tr><tr><td>Shipping</td><td>$5.00</td></tr><tr><td>Total</td><td><strong>$53.00 USD</strong></td></tr></table>
<h3>Customer information</h3><p>Shipping address<br>Ada Lovelace<br>12 Byron Street<br>Portland OR 97205<br>United States</p>`,
      footer: `If you have any questions, reply to this email or contact us at <a href="mailto:hello@byron-goods.example">hello@byron-goods.example</a>`,
    }),
    code: null,
    link: 'https://byron-goods.example/71234560/orders/4f2c9e0b1a7d/authenticate?key=8c1f2e',
  },
  {
    name: 'shopify-login-code',
    subject: 'Your login code for Byron Goods',
    text: `Byron Goods

Log in to Byron Goods

Enter this code to log in:

204118

This code will expire in 10 minutes. If you didn't request it, you can ignore this email.

Byron Goods, 12 Byron Street, Portland OR 97205, United States`,
    code: '204118',
  },
  {
    name: 'bank-card-otp',
    subject: 'Your one-time passcode',
    text: `Dear customer,

Your one-time passcode (OTP) for the transaction of EUR 1,250.00 at ACME ONLINE on card ending 4242 is 58 21 94. It is valid for 10 minutes.

Never share this code with anyone, including bank staff. If you did not initiate this transaction, call us on +44 20 7946 0958.

Northwind Bank plc, 1 Lombard Street, London EC3V 9AA. Registered in England No. 00123456.`,
    code: '582194',
  },
  {
    name: 'bank-new-payee',
    subject: 'Confirm your new payee',
    clicks: false,
    html: frame({
      brand: 'Northwind Bank',
      preheader: 'Confirm the payee you added',
      logo: 'https://northwind-bank.example/',
      body: `<p>Dear Ada Lovelace,</p><p>You added a new payee on 1 August 2026 at 14:32: ACME LTD (IBAN DE89 3704 0044 0532 0130 00).</p>
<p>To confirm adding the payee, enter the security code <b>6613 5528</b> in the Northwind app.</p>
<p>Reference: 4821093. Questions? Call 0800 555 0199, 24/7.</p>`,
      footer: `Northwind Bank plc, 1 Lombard Street, London EC3V 9AA. <a href="https://northwind-bank.example/security">Security centre</a>`,
    }),
    code: '66135528',
  },
  {
    name: 'parcel-delivery-pin',
    subject: 'Track your parcel: arriving today',
    html: frame({
      brand: 'Swift Parcel',
      preheader: 'Your parcel from Byron Goods is arriving today between 10:00 and 13:00',
      logo: 'https://swiftparcel.example/',
      body: `<h2>Your parcel is arriving today</h2><p>Between 10:00 and 13:00. Tracking number: JD014600003828472591</p>
<p>Your delivery PIN: <strong style="font-size:22px">7391</strong><br>Share it with the driver to receive your parcel.</p>
${button('https://swiftparcel.example/manage?id=JD014600003828472591&action=change', 'Change delivery')}
${button('https://swiftparcel.example/track?id=JD014600003828472591', 'Track your parcel')}`,
      footer: `Swift Parcel Ltd, Unit 4, 200 Harbour Road, Bristol BS1 5DB. <a href="https://swiftparcel.example/preferences?u=a81">Manage your notifications</a> · <a href="https://swiftparcel.example/unsubscribe?u=a81">Unsubscribe</a>`,
    }),
    code: '7391',
    link: 'https://swiftparcel.example/track?id=JD014600003828472591',
  },
  {
    name: 'marketplace-sign-in-attempt',
    subject: 'Sign-in attempt',
    text: `Shoply

Someone who knows your password is attempting to sign in to your account.

When: August 1, 2026 4:12 PM CEST
Device: Chrome on Windows 10
Near: Berlin, Germany

If this was you, your verification code is:

204861

Don't share this OTP with anyone. Our customer service team will never ask you for your password, OTP, credit card, or banking info.

If this wasn't you, deny it here: https://shoply.example/ap/deny?arb=9d8c7b

We hope to see you again soon.`,
    code: '204861',
  },
  {
    name: 'apple-id-verify',
    subject: 'Verify your Apple Account email address',
    html: `<!DOCTYPE html><html><body style="font-family:-apple-system,Helvetica,sans-serif"><div style="max-width:685px;margin:auto">
<img src="https://appleid.cdn-apple.example/logo.png" alt="Apple" width="36">
<h1 style="font-size:24px">Verify your email address</h1>
<p>You have selected this email address as your new Apple Account. To verify this email address belongs to you, enter the code below on the email verification page:</p>
<p style="font-size:28px;font-weight:600">318604</p>
<p>This code will expire three hours after this email was sent.</p>
<p><strong>Why you received this email.</strong><br>Apple requires verification whenever an email address is selected as an Apple Account. Your Apple Account cannot be used until you verify it.</p>
<p>If you did not make this request, you can ignore this email. No Apple Account will be created without verification.</p>
<p>Apple Support</p>
<p style="font-size:12px;color:#888"><a href="https://appleid.apple.example/">Apple Account</a> | <a href="https://support.apple.example/">Support</a> | <a href="https://www.apple.example/legal/privacy/">Privacy Policy</a><br>Copyright © 2026 One Apple Park Way, Cupertino, CA 95014, United States. All rights reserved.</p>
</div></body></html>`,
    code: '318604',
  },
  {
    name: 'dropbox-verify-email',
    subject: 'Please verify your email',
    html: frame({
      brand: 'Dropbox',
      preheader: 'Verify your email address to finish setting up your account',
      logo: 'https://www.dropbox.example/',
      body: `<p>Hi Ada,</p><p>Please verify your email so you can keep using Dropbox. It'll only take a moment.</p>
${button('https://www.dropbox.example/emails/verify/n3Q2T6yHq1Ls?cl=en', 'Verify your email')}
<p>Happy Dropboxing!<br>- The Dropbox Team</p>`,
      footer: `<a href="https://www.dropbox.example/help">Help Center</a> · <a href="https://www.dropbox.example/account/notifications">Email preferences</a><br>© 2026 Dropbox, 1800 Owens St, San Francisco, CA 94158`,
    }),
    code: null,
    link: 'https://www.dropbox.example/emails/verify/n3Q2T6yHq1Ls?cl=en',
  },
  {
    name: 'dropbox-verify-email-untracked',
    subject: 'Please verify your email',
    clicks: false,
    html: frame({
      brand: 'Dropbox',
      preheader: 'Verify your email address to finish setting up your account',
      logo: 'https://www.dropbox.example/',
      body: `<p>Hi Ada,</p><p>Please verify your email so you can keep using Dropbox. It'll only take a moment.</p>
${button('https://www.dropbox.example/emails/verify/Wq8sK1pL0aZe?cl=en', 'Verify your email')}`,
      footer: `<a href="https://www.dropbox.example/account/notifications">Email preferences</a><br>© 2026 Dropbox, 1800 Owens St, San Francisco, CA 94158`,
    }),
    code: null,
    link: 'https://www.dropbox.example/emails/verify/Wq8sK1pL0aZe?cl=en',
  },
  {
    name: 'notes-app-magic-link',
    subject: 'Your Inkwell login link',
    text: `Log in to Inkwell

Click the link below to log in with this magic link:

https://www.inkwell.example/loginwithemail?state=7c2a91&token=vR2x8Lq0bN

Or, copy and paste this temporary login code: goth-lamp-mist-reef

If you didn't try to log in, you can safely ignore this email.

Inkwell, 2300 Harrison Street, San Francisco, CA 94110`,
    html: frame({
      brand: 'Inkwell',
      preheader: 'Log in to Inkwell with this magic link',
      logo: 'https://www.inkwell.example/',
      body: `<h1>Log in to Inkwell</h1><p><a href="https://www.inkwell.example/loginwithemail?state=7c2a91&amp;token=vR2x8Lq0bN" style="color:#2eaadc">Click here to log in with this magic link</a></p>
<p>Or, copy and paste this temporary login code:</p><p style="font-family:monospace;background:#f4f4f4;padding:16px">goth-lamp-mist-reef</p>
<p style="color:#aaa">If you didn't try to log in, you can safely ignore this email.</p>`,
      footer: 'Inkwell, 2300 Harrison Street, San Francisco, CA 94110',
    }),
    code: null,
    link: 'https://www.inkwell.example/loginwithemail?state=7c2a91&token=vR2x8Lq0bN',
  },
  {
    name: 'hosting-sign-in-code-letters',
    subject: 'Sign in to Deployo',
    text: `Sign in to Deployo

Your sign-in code is ZX81QA. It expires in 10 minutes.

This request was made from Berlin, Germany (IP 203.0.113.24) at 14:32 UTC.

If you didn't request this code, you can ignore this email.

Deployo Inc., 440 N Barranca Ave #4133, Covina, CA 91723`,
    code: 'ZX81QA',
  },
  {
    name: 'code-only-in-subject',
    subject: '773195 is your Chirp verification code',
    text: `Hi Ada,

Someone is trying to sign in to your Chirp account 77812345 from a new device.

If this was you, use the code in the subject line of this email. If not, change your password now: https://chirp.example/account/password

Chirp, 1355 Market Street, Suite 900, San Francisco, CA 94103`,
    code: '773195',
  },
  {
    name: 'sms-style-prefixed-code',
    subject: 'Your Google verification code',
    text: 'G-605112 is your Google verification code.',
    code: '605112',
    link: null,
  },
  {
    name: 'design-tool-invitation',
    subject: 'Ada Lovelace invited you to join Analytical Engines on Pixelboard',
    html: frame({
      brand: 'Pixelboard',
      preheader: 'Ada Lovelace invited you to a team on Pixelboard',
      logo: 'https://www.pixelboard.example/',
      body: `<p style="text-align:right"><a href="https://www.pixelboard.example/login">Log in</a></p>
<p><strong>Ada Lovelace</strong> has invited you to join the team <strong>Analytical Engines</strong> on Pixelboard.</p>
${button('https://www.pixelboard.example/team_invite/accept/55120?token=ab83f0', 'Accept invitation')}
<p>Pixelboard is where teams design together. <a href="https://www.pixelboard.example/about">Learn more about Pixelboard</a></p>`,
      footer: `<a href="https://www.pixelboard.example/settings/notifications">Notification settings</a> · Pixelboard, Inc. 760 Market St, Floor 10, San Francisco, CA 94102`,
    }),
    code: null,
    link: 'https://www.pixelboard.example/team_invite/accept/55120?token=ab83f0',
  },
  {
    name: 'framework-password-reset-text',
    subject: 'Password reset on acme.example',
    text: `You're receiving this email because you requested a password reset for your user account at acme.example.

Please go to the following page and choose a new password:

https://acme.example/accounts/reset/MjQ/c1b2-9f3e1a0d4b7c8e2f/

Your username, in case you've forgotten: ada

Thanks for using our site!

The acme.example team`,
    code: null,
    link: 'https://acme.example/accounts/reset/MjQ/c1b2-9f3e1a0d4b7c8e2f/',
  },
  {
    name: 'newsletter-double-opt-in',
    subject: 'Analytical Weekly: Please Confirm Subscription',
    html: `<!doctype html><html><head><title>Analytical Weekly: Please Confirm Subscription</title></head><body>
<table width="100%"><tr><td style="font-size:11px;text-align:center"><a href="https://us21.campaign-archive.example/?u=7e1f&amp;id=0a9b" target="_blank">View this email in your browser</a></td></tr>
<tr><td align="center"><a href="https://analytical-weekly.example/"><img src="https://mcusercontent.example/7e1f/images/logo.png" alt="" width="200"></a></td></tr>
<tr><td align="center"><h1>Please Confirm Subscription</h1>
<a class="mcnButton" href="https://analytical-weekly.us21.list-manage.example/subscribe/confirm?u=7e1f&amp;id=0a9b&amp;e=c3d5" style="background:#0a7;color:#fff;padding:15px;display:block">Yes, subscribe me to this list.</a>
<p>If you received this email by mistake, simply delete it. You won't be subscribed if you don't click the confirmation link above.</p></td></tr>
<tr><td style="font-size:12px;color:#656565">For questions about this list, please contact: <a href="mailto:editor@analytical-weekly.example">editor@analytical-weekly.example</a><br>
Our mailing address is: Analytical Weekly · 12 Market St · Springfield, IL 62701 · USA<br>
<a href="https://analytical-weekly.us21.list-manage.example/profile?u=7e1f&amp;id=0a9b">update your preferences</a> or <a href="https://analytical-weekly.us21.list-manage.example/unsubscribe?u=7e1f&amp;id=0a9b">unsubscribe from this list</a></td></tr>
</table></body></html>`,
    code: null,
    link: 'https://analytical-weekly.us21.list-manage.example/subscribe/confirm?u=7e1f&id=0a9b&e=c3d5',
  },
  {
    name: 'video-meeting-invitation',
    subject: 'Invitation: Design review @ Thu Aug 6, 2026 10am - 11am (CEST)',
    text: `Ada Lovelace is inviting you to a scheduled meeting.

Topic: Design review
Time: Aug 6, 2026 10:00 AM Berlin

Join the meeting
https://meet.confero.example/j/85512345678?pwd=bXl6R2ZzZ0V4

Meeting ID: 855 1234 5678
Passcode: 481516

One tap mobile
+16465588656,,85512345678#,,,,*481516# US (New York)

Dial by your location
        +1 646 558 8656 US (New York)
        +49 69 7104 9922 Germany

Find your local number: https://meet.confero.example/u/kbxQ7`,
    code: '481516',
    link: 'https://meet.confero.example/j/85512345678?pwd=bXl6R2ZzZ0V4',
  },
  {
    name: 'enterprise-mfa-code',
    subject: 'Your Keygate verification code',
    text: `Hi Ada,

A sign-in to analytical-engines.keygate.example is waiting for a second step.

Verification code: 905 114

Sign-in attempt from IP 203.0.113.24 (Berlin, Germany) at 14:32 UTC on Aug 1, 2026, using Firefox 128 on Linux.

If you did not try to sign in, reset your password right away: https://analytical-engines.keygate.example/signin/forgot-password

This is an automatically generated message from Keygate. Replies are not monitored or answered.`,
    code: '905114',
  },
  {
    name: 'ride-receipt',
    subject: 'Your Thursday afternoon trip with Rolla',
    html: frame({
      brand: 'Rolla',
      preheader: 'Thanks for riding, Ada',
      logo: 'https://www.rolla.example/',
      body: `<h1>Thanks for riding, Ada</h1><p>We hope you enjoyed your ride this afternoon.</p>
<table><tr><td>Total</td><td>€23.40</td></tr><tr><td>Trip fare</td><td>€19.90</td></tr><tr><td>Booking fee</td><td>€2.50</td></tr><tr><td>Tip</td><td>€1.00</td></tr></table>
<p>4:12 PM · 1200 Friedrichstraße 12, 10117 Berlin<br>4:31 PM · Alexanderplatz 1, 10178 Berlin</p>
<p>You rode with Jonas · License plate B-RX 4821</p>
${button('https://riders.rolla.example/trips/2f9d8c71?download=pdf', 'Download PDF')}`,
      footer: `<a href="https://help.rolla.example/">Help</a> · <a href="https://www.rolla.example/legal/privacy">Privacy</a><br>Rolla B.V., Mr. Treublaan 7, 1097 DP Amsterdam, Netherlands`,
    }),
    code: null,
    link: 'https://riders.rolla.example/trips/2f9d8c71?download=pdf',
  },
  {
    name: 'hotel-booking-confirmation',
    subject: 'Your booking is confirmed: Hotel Lindenhof, Aug 14 – 16',
    html: frame({
      brand: 'Staynest',
      preheader: 'Booking reference 4821093',
      logo: 'https://www.staynest.example/',
      body: `<h2>Thanks, Ada! Your booking at Hotel Lindenhof is confirmed.</h2>
<p>Booking reference: <strong>4821093</strong> · PIN: hidden, see the app</p>
<p>Check-in: Friday, Aug 14, 2026 from 15:00<br>Check-out: Sunday, Aug 16, 2026 until 11:00</p>
<p>Hotel Lindenhof, Lindenstraße 44, 10969 Berlin · Phone: +49 30 2593 0120</p>
<p>Total price: € 318.00</p>
${button('https://secure.staynest.example/myreservations/4821093?pincode=hidden', 'Manage booking')}
<p><a href="https://secure.staynest.example/myreservations/4821093/cancel">Cancel booking</a></p>`,
      footer: `Staynest B.V., Herengracht 597, 1017 CE Amsterdam. <a href="https://www.staynest.example/unsubscribe?e=ada">Unsubscribe</a>`,
    }),
    code: null,
    link: 'https://secure.staynest.example/myreservations/4821093?pincode=hidden',
  },
  {
    name: 'chat-app-verify-login',
    subject: 'Verify login from new location',
    html: frame({
      brand: 'Parley',
      preheader: 'Verify your login location',
      logo: 'https://parley.example/',
      body: `<h2>Hey ada,</h2><p>It looks like someone tried to log into your Parley account from a new location. If this is you, follow the link below to authorize logging in from this location on your account. If this isn't you, we suggest changing your password as soon as possible.</p>
<p><strong>IP Address:</strong> 203.0.113.5<br><strong>Location:</strong> Berlin, Land Berlin, Germany</p>
${button('https://click.parley.example/ls/click?upn=u001.Qx7e-2BvW9k', 'Verify Login')}`,
      footer: `Sent by Parley • <a href="https://blog.parley.example/">check our blog</a> • <a href="https://twitter.com/parley">@parley</a><br>444 De Haro Street, Suite 200, San Francisco, CA 94107`,
    }),
    code: null,
    link: 'https://click.parley.example/ls/click?upn=u001.Qx7e-2BvW9k',
  },
  {
    name: 'payments-login-code-short',
    subject: 'Your PayFlow security code',
    text: "PayFlow: Your security code is 774120. It expires in 10 minutes. Don't share this code with anyone.",
    code: '774120',
    link: null,
  },
  {
    name: 'html-code-with-text-stub',
    subject: 'Your Acme sign-in code',
    text: 'View this email in your browser: https://email.acme.example/view/8812',
    html: frame({
      brand: 'Acme',
      preheader: 'Use this code to sign in',
      logo: 'https://acme.example/',
      body: `<p>Thanks for order #10423 (2 items).</p><p>To sign in, enter this code:</p><p style="font-size:32px;letter-spacing:8px">90&nbsp;31&nbsp;17</p><p>It expires in 15 minutes.</p>`,
      footer: 'Acme Inc, 1200 Market Street, San Francisco, CA 94103 · Call us: (555) 010-0199',
    }),
    code: '903117',
  },
  {
    name: 'issue-tracker-notification',
    subject: 'Re: [analytical/engine] Fix carry propagation in the mill (PR #4821)',
    text: `@ada-lovelace approved this pull request.

Looks good to me. The carry now propagates in 3 cycles instead of 5.

—
Reply to this email directly, view it on GitHub:
https://github.com/analytical/engine/pull/4821#pullrequestreview-2210345678

You are receiving this because you authored the thread.

Unsubscribe: https://github.com/notifications/unsubscribe-auth/AAB7XQ2`,
    html: `<p><b>@ada-lovelace</b> approved this pull request.</p><p>Looks good to me. The carry now propagates in 3 cycles instead of 5.</p>
<p style="font-size:small;color:#666">—<br>Reply to this email directly, <a href="https://github.com/analytical/engine/pull/4821#pullrequestreview-2210345678">view it on GitHub</a>, or <a href="https://github.com/notifications/unsubscribe-auth/AAB7XQ2">unsubscribe</a>.<br>You are receiving this because you authored the thread.<img src="https://github.com/notifications/beacon/AAB7XQ2.gif" height="1" width="1" alt=""></p>`,
    code: null,
    link: 'https://github.com/analytical/engine/pull/4821#pullrequestreview-2210345678',
  },
];
