import FindMyWay, { type HTTPMethod } from 'find-my-way';

/**
 * Every route the app serves, to tell an unknown path (404 RouteNotFound) from a known path
 * asked with another method (405 MethodNotAllowed): Fastify answers 404 for both.
 */
export class RouteIndex {
  private readonly router = FindMyWay({ ignoreTrailingSlash: true });
  private readonly methods = new Set<HTTPMethod>();

  add(method: string | string[], url: string): void {
    for (const m of Array.isArray(method) ? method : [method]) {
      const upper = m.toUpperCase() as HTTPMethod;
      this.methods.add(upper);
      try {
        this.router.on(upper, url, () => undefined);
      } catch {
        // The same route registered twice (HEAD for GET): already known.
      }
    }
  }

  /** The methods that would match this path, empty when the path is unknown. */
  allowedMethods(url: string): string[] {
    const path = url.split('?')[0] ?? url;
    return [...this.methods].filter((m) => this.router.find(m, path) !== null).sort();
  }
}
