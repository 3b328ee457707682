// An instance's, worker's or deployment's state as a coloured tag, with its message on hover.
import { Tag, Tooltip } from "antd";
import { useTranslation } from "react-i18next";

const COLORS: Record<string, string> = {
  RUNNING: "green", ready: "green", running: "green",
  ERROR: "red", error: "red", unreachable: "red",
  PENDING: "default", SCHEDULED: "blue", INITIALIZING: "blue", DOWNLOADING: "blue", STARTING: "gold",
  not_ready: "orange", maintenance: "purple", stopped: "default", starting: "gold", pending: "default", stopping: "default",
};

export default function StateTag({ state, message }: { state: string; message?: string }) {
  const { t } = useTranslation();
  const label = t(`state.${state}`, { defaultValue: state });
  const tag = <Tag color={COLORS[state] ?? "default"} data-state={state}>{label}</Tag>;
  return message ? <Tooltip title={<span style={{ whiteSpace: "pre-wrap" }}>{message}</span>}>{tag}</Tooltip> : tag;
}
