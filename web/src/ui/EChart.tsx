import { useEffect, useRef, type ReactNode } from 'react';
import { DEFAULT_THEME } from '@mantine/core';
import * as echarts from 'echarts/core';
import { BarChart, LineChart, PieChart } from 'echarts/charts';
import { GridComponent, LegendComponent, TooltipComponent } from 'echarts/components';
import { SVGRenderer } from 'echarts/renderers';
import { SEVERITY_COLORS } from './SeverityBadge';

// Only what the console draws: a full ECharts import would triple the chart bundle.
echarts.use([BarChart, LineChart, PieChart, GridComponent, LegendComponent, TooltipComponent, SVGRenderer]);

export type EChartOption = echarts.EChartsCoreOption;

/** A Mantine colour name (as SEVERITY_COLORS holds) as the hex ECharts needs, shade 7 for contrast. */
export function mantineHex(name: string, shade = 7): string {
  return DEFAULT_THEME.colors[name]?.[shade] ?? DEFAULT_THEME.colors.gray[6];
}

/** A severity (any case) as its chart colour, the same hue as its badge. */
export function severityHex(severity: string): string {
  return mantineHex(SEVERITY_COLORS[severity.toLowerCase()] ?? 'gray');
}

/**
 * An ECharts chart that follows its container's size. Charts are pictures to a screen reader, so the
 * chart is one labelled image and `summary` (a list or table of the same numbers) is read instead.
 */
export function EChart({ option, label, summary, height = 240 }: { option: EChartOption; label: string; summary: ReactNode; height?: number }) {
  const container = useRef<HTMLDivElement>(null);
  const chart = useRef<echarts.ECharts | null>(null);

  useEffect(() => {
    const element = container.current;
    if (!element) return;
    const instance = echarts.init(element, undefined, { renderer: 'svg' });
    chart.current = instance;
    const observer = new ResizeObserver(() => instance.resize());
    observer.observe(element);
    return () => {
      observer.disconnect();
      instance.dispose();
      chart.current = null;
    };
  }, []);

  useEffect(() => {
    chart.current?.setOption(option, { notMerge: true });
  }, [option]);

  return (
    <div>
      <div ref={container} role="img" aria-label={label} style={{ width: '100%', height }} />
      <div className="visually-hidden">{summary}</div>
    </div>
  );
}
