import { HttpIngressPathType, Ingress, IngressBackend, Secret, type Service } from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import { COMPONENTS, PORTS, stackNames, type StackNames } from './generators/names';
import { objectLabels } from './labels';

/** What `BackendIngress` exposes. */
export interface BackendIngressProps {
  /** The backend's Service (`Backend.service`). */
  readonly service: Service;
  /** Host name the Ingress answers for. */
  readonly host: string;
  /** Secret with the TLS certificate for `host`. @default none (plain HTTP) */
  readonly tlsSecret?: string;
  /** `ingressClassName`. @default the cluster's default class */
  readonly ingressClass?: string;
  /** @default stackNames('') */
  readonly names?: StackNames;
  /** `app.kubernetes.io/version` (the backend's, from `imageVersion`). @default none */
  readonly version?: string;
}

/**
 * An Ingress to the backend Service. Its controller is the one proxy hop the backend trusts
 * (`TRUST_PROXY=1` by default when this exists), so `X-Forwarded-For` is the controller's word.
 */
export class BackendIngress extends Construct {
  /** The cdk8s-plus Ingress; add hosts or paths with `ingress.addHostRule`. */
  readonly ingress: Ingress;

  constructor(scope: Construct, id: string, props: BackendIngressProps) {
    super(scope, id);
    const names = props.names ?? stackNames();
    this.ingress = new Ingress(this, 'ingress', {
      metadata: { name: names.backend, labels: objectLabels(COMPONENTS.backend, names.instance, props.version) },
      className: props.ingressClass,
      tls: props.tlsSecret
        ? [{ hosts: [props.host], secret: Secret.fromSecretName(this, 'tls', props.tlsSecret) }]
        : undefined,
      rules: [
        {
          host: props.host,
          path: '/',
          pathType: HttpIngressPathType.PREFIX,
          backend: IngressBackend.fromService(props.service, { port: PORTS.backend }),
        },
      ],
    });
  }
}
