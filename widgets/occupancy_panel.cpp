#include "widgets/occupancy_panel.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QVBoxLayout>

namespace kl::gui {

OccupancyPanel::OccupancyPanel(QWidget* parent)
    : QWidget(parent)
    , m_kernel(new QComboBox(this))
    , m_variation(new QComboBox(this))
    , m_chart(new OccupancyChart(this))
{
    //: occupancy chart choice: what varies along the x axis
    m_variation->addItem(tr("vs registers per thread"), static_cast<int>(OccupancyChart::Variation::Registers));
    m_variation->addItem(tr("vs threads per block"), static_cast<int>(OccupancyChart::Variation::BlockSize));
    m_variation->addItem(tr("vs shared memory per block"), static_cast<int>(OccupancyChart::Variation::SharedMemory));
    m_kernel->setSizeAdjustPolicy(QComboBox::AdjustToContents);

    auto* choices = new QHBoxLayout;
    choices->setContentsMargins(4, 0, 4, 0);
    choices->addWidget(m_kernel);
    choices->addWidget(m_variation);
    choices->addStretch(1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addLayout(choices);
    layout->addWidget(m_chart, 1);

    connect(m_kernel, &QComboBox::currentIndexChanged, this, &OccupancyPanel::showSelected);
    connect(m_variation, &QComboBox::currentIndexChanged, this,
        [this] { m_chart->setVariation(static_cast<OccupancyChart::Variation>(m_variation->currentData().toInt())); });
    clear();
}

void OccupancyPanel::setKernels(const DeviceLimits& device, std::vector<OccupancyChart::KernelShape> kernels)
{
    m_device = device;
    const int previous = m_kernel->currentIndex();
    m_kernels = std::move(kernels);
    {
        const QSignalBlocker blocker(m_kernel);
        m_kernel->clear();
        for (const OccupancyChart::KernelShape& shape : m_kernels)
            m_kernel->addItem(shape.kernel);
        if (previous >= 0 && previous < m_kernel->count())
            m_kernel->setCurrentIndex(previous);
    }
    m_kernel->setEnabled(m_kernels.size() > 1);
    showSelected();
}

void OccupancyPanel::clear(const QString& reason)
{
    m_kernels.clear();
    const QSignalBlocker blocker(m_kernel);
    m_kernel->clear();
    m_kernel->setEnabled(false);
    m_chart->clear(reason);
}

void OccupancyPanel::showSelected()
{
    const int index = m_kernel->currentIndex();
    if (index < 0 || index >= static_cast<int>(m_kernels.size())) {
        m_chart->clear();
        return;
    }
    m_chart->setKernel(m_device, m_kernels[static_cast<std::size_t>(index)]);
}

} // namespace kl::gui
