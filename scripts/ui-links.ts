/** What `make up` prints for Prometheus and Alertmanager: links that open something, and amtool commands. */
export interface UiLinks {
  /** Full URLs of the Prometheus targets, alerts and rules pages on the UI this binary serves. */
  readonly prometheus: readonly string[];
  /** Alertmanager's web UI, when the binary serves one (Debian's does not). */
  readonly alertmanagerUi?: string;
  /** amtool commands that show the alerts and silences. */
  readonly amtool: readonly string[];
}

async function answers(url: string, marker?: RegExp): Promise<boolean> {
  try {
    const res = await fetch(url);
    if (res.status !== 200) return false;
    const text = await res.text();
    return marker ? marker.test(text) : true;
  } catch {
    return false;
  }
}

/**
 * Finds which Prometheus UI is served (Debian's package serves only the classic one, under
 * `/classic/`) and whether Alertmanager has a web UI (Debian's shows an apology page instead).
 */
export async function detectUiLinks(prometheusUrl: string, alertmanagerUrl: string): Promise<UiLinks> {
  const pages = ['targets', 'alerts', 'rules'];
  const classic = await answers(`${prometheusUrl}/classic/targets`, /<html/i);
  const prefix = classic ? `${prometheusUrl}/classic` : prometheusUrl;
  const hasUi = await answers(`${alertmanagerUrl}/`, /script\.js|<div id="app"/i);
  return {
    prometheus: pages.map((p) => `${prefix}/${p}`),
    alertmanagerUi: hasUi ? `${alertmanagerUrl}/#/alerts` : undefined,
    amtool: [
      `amtool --alertmanager.url=${alertmanagerUrl} alert query`,
      `amtool --alertmanager.url=${alertmanagerUrl} silence query`,
    ],
  };
}
