#!/usr/bin/env python3
"""A simulated GPU exporter: serves the metrics of a few GPUs on a few nodes in the shapes of
Alibaba's gpu exporter (nvidia_gpu_*) and NVIDIA's dcgm-exporter (DCGM_FI_*), for the demo and
the integration tests.

--mode static serves fixed values (tests compute expectations from them); --mode wave makes
utilisation follow slow sine waves so a demo shows values moving."""

import argparse
import http.server
import math
import sys
import time

# (node, gpu index, namespace, pod, container); an unallocated GPU has empty pod labels.
GPUS = [
    ("gpu-node-1", 0, "default", "bert-intent-detection-7c9f6b5d4-2xkqp", "serving"),
    ("gpu-node-1", 1, "default", "bert-intent-detection-7c9f6b5d4-9wz7m", "serving"),
    ("gpu-node-1", 2, "default", "llm-batch-6f7d8c9b5-x8k2w", "worker"),
    ("gpu-node-2", 0, "default", "bert-intent-detection-7c9f6b5d4-lq4tn", "serving"),
    ("gpu-node-2", 1, "ml-team", "resnet-serving-5d8b7c6f9-pr2vd", "resnet"),
    ("gpu-node-2", 2, "", "", ""),
]
STATIC_DUTY = [37.5, 82.25, 91.5, 15.0, 64.125, 0.0]
# kube-state-metrics' kube_node_labels: node -> value of its `nodepool` label (cpu-node-1 has
# no GPU, so its pool has no GPU utilisation).
NODE_POOLS = [("gpu-node-1", "gpu-a"), ("gpu-node-2", "gpu-b"), ("cpu-node-1", "cpu")]
MODEL = "Tesla T4"
MEMORY_TOTAL_MIB = 15360


def gpu_uuid(node, index):
    """A stable, UUID-shaped identifier per (node, GPU)."""
    seed = sum(map(ord, node))
    return "GPU-%08x-%04x-4b1d-0a11-%012x" % (seed * 7919 + index, index, seed * 1000 + index)


def duty_cycle(i, mode, now):
    if mode == "static":
        return float(STATIC_DUTY[i])
    if not GPUS[i][3]:
        return 0.0
    phase = i * 1.3
    return round(50 + 45 * math.sin(now / 30.0 + phase), 1)


def gpu_values(i, mode, now):
    duty = duty_cycle(i, mode, now)
    memory_used_mib = round(1024 + duty * 100) if GPUS[i][3] else 0
    return {
        "duty": duty,
        "memory_used_mib": memory_used_mib,
        "temperature": 35 + round(duty / 4),
        "power_watts": round(20 + duty * 0.5, 1),
    }


def labels(pairs):
    return "{" + ",".join('%s="%s"' % (k, v) for k, v in pairs) + "}"


def render(mode):
    now = time.time()
    lines = []
    alibaba = [
        ("nvidia_gpu_duty_cycle", "gauge", lambda v: v["duty"]),
        ("nvidia_gpu_memory_used_bytes", "gauge", lambda v: v["memory_used_mib"] * 1048576),
        ("nvidia_gpu_memory_total_bytes", "gauge", lambda v: MEMORY_TOTAL_MIB * 1048576),
        ("nvidia_gpu_temperature_celsius", "gauge", lambda v: v["temperature"]),
        ("nvidia_gpu_power_usage_milliwatts", "gauge", lambda v: v["power_watts"] * 1000),
    ]
    dcgm = [
        ("DCGM_FI_DEV_GPU_UTIL", "gauge", lambda v: v["duty"]),
        ("DCGM_FI_DEV_FB_USED", "gauge", lambda v: v["memory_used_mib"]),
        ("DCGM_FI_DEV_FB_FREE", "gauge", lambda v: MEMORY_TOTAL_MIB - v["memory_used_mib"]),
        ("DCGM_FI_DEV_GPU_TEMP", "gauge", lambda v: v["temperature"]),
        ("DCGM_FI_DEV_POWER_USAGE", "gauge", lambda v: v["power_watts"]),
    ]
    values = [gpu_values(i, mode, now) for i in range(len(GPUS))]
    for name, kind, value in alibaba:
        lines.append("# TYPE %s %s" % (name, kind))
        for i, (node, index, namespace, pod, container) in enumerate(GPUS):
            lines.append("%s%s %s" % (name, labels([
                ("allocate_mode", "exclusive" if pod else "none"),
                ("container_name", container), ("minor_number", index), ("name", MODEL),
                ("namespace_name", namespace), ("node_name", node), ("pod_name", pod),
                ("uuid", gpu_uuid(node, index))]), format_value(value(values[i]))))
    for name, kind, value in dcgm:
        lines.append("# TYPE %s %s" % (name, kind))
        for i, (node, index, namespace, pod, container) in enumerate(GPUS):
            lines.append("%s%s %s" % (name, labels([
                ("gpu", index), ("UUID", gpu_uuid(node, index)), ("device", "nvidia%d" % index),
                ("modelName", MODEL), ("Hostname", node), ("container", container),
                ("namespace", namespace), ("pod", pod)]), format_value(value(values[i]))))
    lines.extend(kube_state_metrics())
    return "\n".join(lines) + "\n"


def app_label(pod):
    """The `app` label of a pod, its Deployment's name: the pod name without the ReplicaSet hash
    and the pod suffix."""
    return pod.rsplit("-", 2)[0]


def kube_state_metrics():
    """kube_node_labels and kube_pod_labels, as kube-state-metrics exports them when allowed to
    (--metric-labels-allowlist=nodes=[nodepool],pods=[app]), for joins in recording rules."""
    lines = ["# TYPE kube_node_labels gauge"]
    for node, pool in NODE_POOLS:
        lines.append("kube_node_labels%s 1" % labels([("label_nodepool", pool), ("node", node)]))
    lines.append("# TYPE kube_pod_labels gauge")
    for _, _, namespace, pod, _ in GPUS:
        if pod:
            lines.append("kube_pod_labels%s 1" % labels([
                ("label_app", app_label(pod)), ("namespace", namespace), ("pod", pod)]))
    return lines


def format_value(value):
    return repr(float(value)) if isinstance(value, float) else str(value)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=9400)
    parser.add_argument("--address", default="127.0.0.1")
    parser.add_argument("--mode", choices=["static", "wave"], default="wave")
    args = parser.parse_args()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path.split("?")[0] != "/metrics":
                self.send_error(404)
                return
            body = render(args.mode).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *unused):
            pass

    server = http.server.ThreadingHTTPServer((args.address, args.port), Handler)
    print("gpu exporter listening on %s:%d" % server.server_address[:2], flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
