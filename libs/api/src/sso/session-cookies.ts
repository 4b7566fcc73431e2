import type { CookieSerializeOptions } from '@fastify/cookie';
import type { FastifyReply } from 'fastify';
import { SESSION_COOKIE } from '../auth/bearer.guard';

/**
 * The short-lived cookie that ties an SSO callback to the browser that started the login. Its Path
 * is that organization's callback (`/v1/sso/{organizationId}/callback`), so no other
 * organization's callback ever receives it.
 */
export const LOGIN_COOKIE = 'openbot_sso_login';

/**
 * HttpOnly (no script reads it), SameSite=Lax (sent on the provider's top-level redirect back,
 * not on cross-site subrequests), Secure unless the public URL is plain http on loopback.
 */
function base(secure: boolean): CookieSerializeOptions {
  return { httpOnly: true, sameSite: 'lax', secure };
}

export function setLoginCookie(reply: FastifyReply, value: string, callbackPath: string, maxAgeSeconds: number, secure: boolean): void {
  void reply.setCookie(LOGIN_COOKIE, value, { ...base(secure), path: callbackPath, maxAge: maxAgeSeconds });
}

export function clearLoginCookie(reply: FastifyReply, callbackPath: string, secure: boolean): void {
  void reply.clearCookie(LOGIN_COOKIE, { ...base(secure), path: callbackPath });
}

export function setSessionCookie(reply: FastifyReply, token: string, expiresAt: Date, secure: boolean): void {
  void reply.setCookie(SESSION_COOKIE, token, { ...base(secure), path: '/', expires: expiresAt });
}

export function clearSessionCookie(reply: FastifyReply, secure: boolean): void {
  void reply.clearCookie(SESSION_COOKIE, { ...base(secure), path: '/' });
}
