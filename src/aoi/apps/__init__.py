"""The app catalog: each app as Kubernetes manifests plus behaviour data, shared by the twin and real clusters."""
