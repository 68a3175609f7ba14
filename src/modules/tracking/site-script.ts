import { createHash } from 'node:crypto';
import type { FastifyPluginAsync } from 'fastify';

/** The cookie the site script keeps the visitor id in (first-party: on the customer's site). */
export const VISITOR_COOKIE = 'herald_vid';

/**
 * The site script (GET /tracker.js), written out by hand in ES5 so it runs in any browser,
 * needs no build step and stays far under 2 KB. What it does, in order:
 *
 * 1. reads the visitor id from the `herald_vid` cookie, or makes one: `vis_` and 32 hex
 *    digits from crypto.getRandomValues (available on http pages too). The prefix keeps it from
 *    ever reading as an email, a phone or a contact id in the API's `lead` rules;
 * 2. writes the cookie back on every page load, so its two-year lifetime slides. It is set
 *    from the page, so it is first-party; `data-cookie-domain` on the script tag shares it with
 *    subdomains. Secure on https pages; SameSite=Lax;
 * 3. exposes the id as `window.herald.tracker`, fills every `<input data-herald-tracker>` (now,
 *    or when the document has loaded; `herald.fill()` again for forms added later), and fires a
 *    `herald:tracker` event on document with the id as `detail`.
 *
 * Only the id goes into the cookie; nothing is sent to Herald: the site's back end passes the
 * id as `tracker` to POST /api/leads and /api/events.
 */
const SOURCE = `(function(w,d){
var n='${VISITOR_COOKIE}',m=d.cookie.match(/(?:^|;\\s*)${VISITOR_COOKIE}=(vis_[0-9a-f]{32})(?:;|$)/),id=m&&m[1],s=d.currentScript,dom=s&&s.getAttribute('data-cookie-domain'),h=w.herald=w.herald||{},i,b;
if(!id){b=new Uint8Array(16);w.crypto.getRandomValues(b);id='vis_';for(i=0;i<16;i++)id+=(b[i]+256).toString(16).slice(1);}
d.cookie=n+'='+id+';path=/;max-age=63072000;SameSite=Lax'+(dom?';domain='+dom:'')+(location.protocol=='https:'?';Secure':'');
h.tracker=id;
h.fill=function(){var f=d.querySelectorAll('input[data-herald-tracker]');for(var j=0;j<f.length;j++)f[j].value=id;};
if(d.readyState=='loading')d.addEventListener('DOMContentLoaded',h.fill);else h.fill();
try{d.dispatchEvent(new CustomEvent('herald:tracker',{detail:id}));}catch(e){}
})(window,document);
`;

export const SITE_SCRIPT = SOURCE;
const ETAG = `"${createHash('sha256').update(SITE_SCRIPT).digest('base64url').slice(0, 16)}"`;

/** GET /tracker.js: public, cacheable for an hour (a change reaches sites within that), revalidated by ETag. */
export const siteScriptRoute: FastifyPluginAsync = async (app) => {
  app.get('/tracker.js', { schema: { hide: true } }, async (request, reply) => {
    reply.headers({
      'cache-control': 'public, max-age=3600',
      etag: ETAG,
      'x-content-type-options': 'nosniff',
      // Loaded by other sites' pages: say so explicitly for browsers that default to same-site.
      'cross-origin-resource-policy': 'cross-origin',
    });
    if (request.headers['if-none-match'] === ETAG) return reply.code(304).send();
    return reply.code(200).type('text/javascript; charset=utf-8').send(SITE_SCRIPT);
  });
};
