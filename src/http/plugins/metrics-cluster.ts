/**
 * /metrics under `guides serve --workers N`: whichever worker a scrape reaches asks the primary,
 * which gathers every worker's numbers (prom-client's AggregatorRegistry sums counters and
 * histograms), so one scrape sees the whole instance, not one worker picked by the kernel.
 */
import cluster from 'node:cluster';
import { AggregatorRegistry } from 'prom-client';
import type { Registry } from 'prom-client';

const CLUSTER_METRICS_REQUEST = 'guides:cluster-metrics-request';
const CLUSTER_METRICS_REPLY = 'guides:cluster-metrics-reply';
const CLUSTER_METRICS_TIMEOUT_MS = 3000;

interface ClusterMetricsMessage {
  type: string;
  id: number;
  text?: string;
}

function isClusterMetricsMessage(message: unknown, type: string): message is ClusterMetricsMessage {
  return typeof message === 'object' && message !== null && (message as ClusterMetricsMessage).type === type;
}

/** In the primary of `serve --workers N`: answers workers' requests for the metrics of all workers. */
export function answerClusterMetricsRequests(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, message: unknown) => {
    if (!isClusterMetricsMessage(message, CLUSTER_METRICS_REQUEST)) return;
    aggregator.clusterMetrics().then(
      (text) => worker.send({ type: CLUSTER_METRICS_REPLY, id: message.id, text }),
      () => worker.send({ type: CLUSTER_METRICS_REPLY, id: message.id }),
    );
  });
}

/** True in a worker of `serve --workers N` (a cluster worker with an IPC channel to its primary). */
export function isClusterWorker(): boolean {
  return cluster.isWorker && typeof process.send === 'function';
}

let nextRequestId = 0;
const waiting = new Map<number, (text: string | undefined) => void>();

/**
 * In a worker: makes `registries` the ones the primary collects from (one app per worker
 * process), and listens for the primary's answers to clusterMetricsText.
 */
export function joinClusterMetrics(registries: Registry[]): void {
  // Constructing one installs prom-client's listener for the primary's collection requests.
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries(registries);
  process.on('message', (message: unknown) => {
    if (isClusterMetricsMessage(message, CLUSTER_METRICS_REPLY)) waiting.get(message.id)?.(message.text);
  });
}

/** In a worker: every worker's metrics through the primary, or undefined if it does not answer in time. */
export function clusterMetricsText(): Promise<string | undefined> {
  return new Promise((resolve) => {
    const id = nextRequestId;
    nextRequestId += 1;
    const timer = setTimeout(() => {
      waiting.delete(id);
      resolve(undefined);
    }, CLUSTER_METRICS_TIMEOUT_MS);
    waiting.set(id, (text) => {
      clearTimeout(timer);
      waiting.delete(id);
      resolve(text);
    });
    process.send?.({ type: CLUSTER_METRICS_REQUEST, id });
  });
}
