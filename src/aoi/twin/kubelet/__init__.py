"""The twin's kubelet: pod lifecycles and status, container files and environment, the runtime seam, exec and usage."""
